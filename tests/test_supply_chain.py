"""Issue 18.1: `models pull` from PyPI wheels. A wheel member that would land outside the staging
folder (zip slip: `..`, an absolute name, a drive letter, a symbolic link) refuses the wheel
before anything is written; each wheel is pinned by its own sha256 in the manifest."""

from __future__ import annotations

import hashlib
import stat
import zipfile
from pathlib import Path

import pytest

from localeval import models
from localeval.cli import main
from localeval.errors import ModelError
from localeval.models import pull

PREFIX = "pkg/model/"
GOOD = {"config.json": b"{}", "sub/weights.bin": bytes(range(256)) * 8}


def tree_hash(files: dict[str, bytes]) -> str:
    lines = "".join(
        f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in sorted(files.items())
    )
    return hashlib.sha256(lines.encode()).hexdigest()


def make_wheel(path: Path, members: dict[str, bytes], links: dict[str, str] | None = None) -> Path:
    with zipfile.ZipFile(path, "w") as zf:
        for name, data in members.items():
            zf.writestr(name, data)
        for name, target in (links or {}).items():
            info = zipfile.ZipInfo(name)
            info.external_attr = (stat.S_IFLNK | 0o777) << 16
            zf.writestr(info, target)
    return path


@pytest.fixture
def world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """A models folder inside a sandbox (so escapes can be looked for) and a wheel to serve."""
    sandbox = tmp_path / "sandbox"
    root = sandbox / "deep" / "models"
    root.mkdir(parents=True)
    monkeypatch.setenv("LOCALEVAL_MODELS_DIR", str(root))
    monkeypatch.setenv("LOCALEVAL_OFFLINE", "1")
    served = tmp_path / "served"
    served.mkdir()
    wheel = served / "fake_pkg-1-py3-none-any.whl"

    def fake_download(requirements: list[str], dest: Path) -> list[Path]:
        dest.mkdir(parents=True, exist_ok=True)
        (dest / wheel.name).write_bytes(wheel.read_bytes())
        return sorted(dest.glob("*.whl"))

    monkeypatch.setattr(pull, "_pip_download", fake_download)
    return {"sandbox": sandbox, "root": root, "wheel": wheel}


def manifest(root: Path, wheel_pin: str | None) -> models.ModelSpec:
    pin = "" if wheel_pin is None else f'\nwheel_sha256 = "{wheel_pin}"'
    (root / "manifest.toml").write_text(
        '[profiles.small]\njudge = "e"\nembedder = "e"\n'
        f'[models.e]\nrole = "embedder"\ndir = "e"\nsize = 0\nsha256 = "{tree_hash(GOOD)}"\n'
        '[[models.e.sources]]\nkind = "pypi-wheel"\npackage = "fake-pkg"\nversion = "1"\n'
        f'member = "{PREFIX}"{pin}\n',
        encoding="utf-8",
    )
    return models.load_manifest().get("e")


def all_files(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir()}


MALICIOUS = {
    "dotdot": ({PREFIX + "../../../x": b"pwned"}, None),
    "dotdot_deep": ({PREFIX + "sub/../../../../escape.txt": b"pwned"}, None),
    "absolute": ({PREFIX + "/{sandbox}/abs_evil.txt": b"pwned"}, None),  # …/model//abs/path
    "drive": ({PREFIX + "C:/evil.txt": b"pwned"}, None),
    "backslash": ({PREFIX + "..\\..\\evil.txt": b"pwned"}, None),
    "symlink": ({}, {PREFIX + "link": "../../../../etc"}),
}


@pytest.mark.parametrize("case", sorted(MALICIOUS))
def test_zip_slip_writes_nothing_outside_and_says_one_line(
    world: dict[str, Path], case: str, capsys: pytest.CaptureFixture[str]
) -> None:
    bad, links = MALICIOUS[case]
    bad = {k.replace("/{sandbox}", str(world["sandbox"])): v for k, v in bad.items()}
    make_wheel(world["wheel"], {**{PREFIX + k: v for k, v in GOOD.items()}, **bad}, links)
    spec = manifest(world["root"], hashlib.sha256(world["wheel"].read_bytes()).hexdigest())
    before = all_files(world["sandbox"])
    assert main(["models", "pull", "e"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "refusing this wheel" in err, err
    assert all_files(world["sandbox"]) == before  # nothing written, staging folder removed
    assert not spec.path().exists()


def test_a_good_wheel_still_installs(world: dict[str, Path]) -> None:
    make_wheel(world["wheel"], {PREFIX + k: v for k, v in GOOD.items()} | {"pkg/other.py": b""})
    spec = manifest(world["root"], hashlib.sha256(world["wheel"].read_bytes()).hexdigest())
    path = pull.pull(spec, log=lambda _: None)
    assert all_files(path) == set(GOOD)
    assert models.check(spec).ok


def test_a_wheel_with_another_sha256_is_refused_before_it_is_opened(
    world: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    make_wheel(world["wheel"], {PREFIX + k: v for k, v in GOOD.items()})
    spec = manifest(world["root"], "0" * 64)
    opened: list[object] = []
    monkeypatch.setattr(pull.zipfile, "ZipFile", lambda *a, **k: opened.append(a))
    with pytest.raises(ModelError, match="the manifest pins 0000000000000000") as exc:
        pull.pull(spec, log=lambda _: None)
    assert "\n" not in str(exc.value) and not opened
    assert not spec.path().exists()


def test_an_unpinned_wheel_warns(world: dict[str, Path]) -> None:
    make_wheel(world["wheel"], {PREFIX + k: v for k, v in GOOD.items()})
    spec = manifest(world["root"], None)
    said: list[str] = []
    assert pull.pull(spec, log=said.append).exists()
    assert any("no wheel_sha256 pinned" in line for line in said)


def test_parts_are_pinned_one_by_one(
    world: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    parts = [b"a" * 100, b"b" * 100]
    wheels = {}
    for n, data in enumerate(parts, start=1):
        wheel = world["wheel"].parent / f"fake_part{n}-1-py3-none-any.whl"
        make_wheel(wheel, {f"fake_part{n}/data/part{n:02d}.bin": data})
        wheels[f"fake-part{n}"] = wheel

    def fake_download(requirements: list[str], dest: Path) -> list[Path]:
        dest.mkdir(parents=True, exist_ok=True)
        for req in requirements:
            src = wheels[req.split("==")[0]]
            (dest / src.name).write_bytes(src.read_bytes())
        return sorted(dest.glob("*.whl"))

    monkeypatch.setattr(pull, "_pip_download", fake_download)
    pins = [hashlib.sha256(w.read_bytes()).hexdigest() for w in wheels.values()]

    def spec_with(pinned: list[str]) -> models.ModelSpec:
        (world["root"] / "manifest.toml").write_text(
            f'[models.j]\nrole = "judge"\nfile = "j.gguf"\nsize = 200\n'
            f'sha256 = "{hashlib.sha256(b"".join(parts)).hexdigest()}"\n'
            '[[models.j.sources]]\nkind = "pypi-parts"\npackage = "fake-part{n}"\nversion = "1"\n'
            f'parts = 2\nmember = "data/part{{n:02d}}.bin"\nwheel_sha256 = {pinned!r}\n'.replace(
                "'", '"'
            ),
            encoding="utf-8",
        )
        return models.load_manifest().get("j")

    with pytest.raises(ModelError, match=r"fake_part2-1-py3-none-any\.whl has sha256"):
        pull.pull(spec_with([pins[0], "f" * 64]), log=lambda _: None)
    with pytest.raises(ModelError, match="pins 1 wheel sha256"):
        pull.pull(spec_with([pins[0]]), log=lambda _: None)
    assert pull.pull(spec_with(pins), log=lambda _: None).read_bytes() == b"".join(parts)


def test_the_real_manifest_pins_every_pypi_wheel() -> None:
    manifest_ = models.load_manifest(models.REPO_MODELS / "manifest.toml")
    for spec in manifest_.models.values():
        for source in spec.sources:
            if source["kind"] == "pypi-parts":
                assert len(source["wheel_sha256"]) == source["parts"], spec.name
            elif source["kind"] == "pypi-wheel":
                assert len(source["wheel_sha256"]) == 64, spec.name


def test_the_gguf_chat_template_runs_in_jinja_sandbox() -> None:
    """Issue 18.2 (what docs/engine.md says): the GGUF's chat template is executed only in
    jinja2's sandbox, and message text is data, never template source."""
    pytest.importorskip("llama_cpp")
    jinja2_sandbox = pytest.importorskip("jinja2.sandbox")
    from localeval.judge.llamacpp.llama import make_chat_formatter

    def fmt(template: str, content: str) -> str:
        return make_chat_formatter(template, lambda _: "", 0, 0)(
            [{"role": "user", "content": content}]
        )

    loop = "{% for m in messages %}<{{ m.role }}>{{ m.content }}{% endfor %}"
    assert fmt(loop, "{{ 7*7 }}") == "<user>{{ 7*7 }}"
    assert jinja2_sandbox.ImmutableSandboxedEnvironment  # what llama-cpp-python renders with
    with pytest.raises(ModelError, match=r"chat template cannot be used \(SecurityError"):
        make_chat_formatter("{{ ''.__class__.__mro__[1].__subclasses__() }}" + loop,
                            lambda _: "", 0, 0)  # refused at load, in one line
