"""Issue 29.4, `models pull --from DIR` and the verified stamp: a folder link is never followed,
sizes are checked before anything is copied, a file rewritten to the same size with its mtime
restored is hashed again (not "already present and verified"), and `.verified.json` is never
written through a planted symlink."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from localeval import models
from localeval.errors import ModelError
from localeval.models import pull

PAYLOAD = bytes(range(256)) * 40


def _manifest(root: Path) -> None:
    sha = hashlib.sha256(PAYLOAD).hexdigest()
    (root / "manifest.toml").write_text(
        '[profiles.tiny]\njudge = "j"\nembedder = "e"\n'
        f'[models.j]\nrole = "judge"\nfile = "j.gguf"\nsize = {len(PAYLOAD)}\n'
        f'sha256 = "{sha}"\nsources = []\n'
        '[models.e]\nrole = "embedder"\ndir = "e"\nsize = 0\nsha256 = ""\nsources = []\n',
        encoding="utf-8",
    )


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "models"
    home.mkdir()
    monkeypatch.setenv("LOCALEVAL_MODELS_DIR", str(home))
    monkeypatch.setenv("LOCALEVAL_OFFLINE", "1")
    _manifest(home)
    return home


def test_pull_from_a_folder_never_follows_a_folder_link(root: Path, tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"  # stands for /usr
    elsewhere.mkdir()
    (elsewhere / "big.bin").write_bytes(b"x" * 100_000)
    src = tmp_path / "src"
    (src / "e").mkdir(parents=True)
    (src / "e" / "config.json").write_text("{}")
    (src / "e" / "usr").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(ModelError, match="link to a folder"):
        pull.pull(models.load_manifest().get("e"), local=src, log=lambda _m: None)
    assert not (root / "e").exists()
    assert not any(p.name == "big.bin" for p in root.rglob("*"))


def test_pull_checks_the_size_before_copying(root: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "j.gguf").write_bytes(PAYLOAD + b"more")
    with pytest.raises(ModelError, match=rf"holds {len(PAYLOAD) + 4} bytes.*not copied"):
        pull.pull(models.load_manifest().get("j"), local=src, log=lambda _m: None)
    assert not (root / "j.gguf").exists()


def test_pull_from_a_right_folder_still_works(root: Path, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "j.gguf").write_bytes(PAYLOAD)
    spec = models.load_manifest().get("j")
    assert pull.pull(spec, local=src, log=lambda _m: None) == root / "j.gguf"
    assert models.check(spec).ok


def test_same_size_with_mtime_restored_is_hashed_again(root: Path, tmp_path: Path) -> None:
    spec = models.load_manifest().get("j")
    target = root / "j.gguf"
    target.write_bytes(PAYLOAD)
    assert models.check(spec).ok  # verified and stamped
    before = target.stat()
    forged = bytearray(PAYLOAD)
    forged[7] ^= 0xFF
    target.write_bytes(bytes(forged))
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size
    assert target.stat().st_mtime_ns == before.st_mtime_ns
    state = models.check(spec, full=False)
    assert state.state == "corrupt" and "does not match" in state.detail
    said: list[str] = []
    src = tmp_path / "src"
    src.mkdir()
    (src / "j.gguf").write_bytes(PAYLOAD)
    pull.pull(spec, local=src, log=said.append)
    assert "already present and verified" not in " ".join(said)
    assert target.read_bytes() == PAYLOAD


def test_verified_json_is_never_written_through_a_symlink(root: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.json"
    outside.write_text('{"kept": true}', encoding="utf-8")
    (root / ".verified.json").symlink_to(outside)
    (root / "j.gguf").write_bytes(PAYLOAD)
    spec = models.load_manifest().get("j")
    assert models.check(spec).ok
    assert json.loads(outside.read_text(encoding="utf-8")) == {"kept": True}
    assert not (root / ".verified.json").is_symlink()
    stamps = json.loads((root / ".verified.json").read_text(encoding="utf-8"))
    assert str((root / "j.gguf").resolve()) in stamps


def test_a_wrong_shaped_verified_json_costs_a_rehash_not_a_traceback(root: Path) -> None:
    (root / "j.gguf").write_bytes(PAYLOAD)
    key = str((root / "j.gguf").resolve())
    for bad in ("[1, 2]", json.dumps({key: 5}), json.dumps({key: {"stamp": 1}}), "[" * 100_000):
        (root / ".verified.json").write_text(bad, encoding="utf-8")
        assert models.check(models.load_manifest().get("j"), full=False).ok


def test_pull_by_name_needs_no_profile(root: Path, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    from localeval.cli import main

    src = tmp_path / "src"
    src.mkdir()
    (src / "j.gguf").write_bytes(PAYLOAD)
    assert main(["models", "pull", "j", "--from", str(src)]) == 0  # no profile 'small' here
    assert "j: ok" in capsys.readouterr().out
