"""The wheel carries its templates, manifest, example and docs, installs into a fresh venv and
runs outside the checkout (issue 19, item 1); where prompts and models are looked for.

The `wheel` tests build the wheel. `test_air_gapped_recipe` is the recipe of
localeval/docs/install.md in full (scripts/wheelhouse.sh, `pip install --no-index`, `models pull
--from`, the example on the tiny judge); it runs where pip's wheel cache holds llama-cpp-python
(after scripts/setup.sh, as in CI), so no 6-minute build happens inside the test.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import sysconfig
import time
import zipfile
from pathlib import Path

import pytest

from localeval import models, paths, prompts
from localeval.cli import main
from tests.conftest import REPO, model_path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

MODEL_SUFFIXES = (".gguf", ".safetensors", ".bin", ".pt", ".onnx")


# ---- where things are looked for (fast) -------------------------------------------------------


def test_every_package_folder_is_in_pyproject() -> None:
    listed = set(tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["setuptools"][
        "packages"])
    folders = {
        ".".join(p.relative_to(REPO).parts)
        for p in (REPO / "localeval").rglob("*")
        if p.is_dir() and p.name != "__pycache__" and any(p.iterdir())
    }
    assert folders | {"localeval"} <= listed, "add the new package folder to pyproject.toml"


def test_prompts_env_then_checkout_then_package(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("LOCALEVAL_PROMPTS", raising=False)
    assert prompts.prompts_dir() == REPO / "prompts" and paths.checkout_root() == REPO
    monkeypatch.setattr(paths, "checkout_root", lambda: None)  # as in an installed wheel
    assert prompts.prompts_dir() == REPO / "localeval" / "_prompts"
    monkeypatch.setenv("LOCALEVAL_PROMPTS", str(tmp_path))
    assert prompts.prompts_dir() == tmp_path


def test_models_dir_option_env_checkout_then_user_cache(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("LOCALEVAL_MODELS_DIR", raising=False)
    assert models.models_dir() == REPO / "models"
    monkeypatch.setattr(paths, "checkout_root", lambda: None)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert models.models_dir() == tmp_path / "xdg" / "localeval" / "models"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert models.models_dir() == tmp_path / "home" / ".cache" / "localeval" / "models"
    monkeypatch.setenv("LOCALEVAL_MODELS_DIR", str(tmp_path / "mine"))
    assert models.models_dir() == tmp_path / "mine"


def test_manifest_comes_from_the_package_when_the_models_dir_has_none(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("LOCALEVAL_MODELS_DIR", str(tmp_path / "empty"))
    assert "small" in models.load_manifest().profiles  # the checkout's models/manifest.toml
    shipped = tmp_path / "site" / "_models"
    shipped.mkdir(parents=True)
    (shipped / "manifest.toml").write_text('[profiles.only]\njudge = "j"\nembedder = "e"\n')
    monkeypatch.setattr(paths, "checkout_root", lambda: None)
    monkeypatch.setattr(paths, "package_data", lambda name: tmp_path / "site" / name)
    assert list(models.load_manifest().profiles) == ["only"]


@pytest.mark.parametrize("before", [True, False])
def test_models_dir_flag_before_or_after_the_subcommand(
    before: bool, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("LOCALEVAL_MODELS_DIR", "unused")  # restored after the test
    (tmp_path / "manifest.toml").write_text(
        '[profiles.p]\njudge = "j"\nembedder = "j"\n'
        '[models.j]\nrole = "judge"\nfile = "j.gguf"\nsize = 1\nsha256 = ""\nsources = []\n'
    )
    flag = ["--models-dir", str(tmp_path)]
    argv = [*flag, "models", "list"] if before else ["models", "list", *flag]
    assert main(argv) == 0
    assert "j (judge, 0 MB, absent)" in capsys.readouterr().out
    assert os.environ["LOCALEVAL_MODELS_DIR"] == str(tmp_path.resolve())


# ---- the built wheel ---------------------------------------------------------------------------


def clean_env(**extra: str) -> dict[str, str]:
    """An environment with no pip configuration (no index, no find-links) and no checkout."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "LOCALEVAL_", "PYTHON", "VIRTUAL_ENV"))}
    env.update(PIP_CONFIG_FILE=os.devnull, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1",
               HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", LOCALEVAL_OFFLINE="1", **extra)
    return env


def sh(cmd: list[str], cwd: Path, env: dict[str, str], timeout: int = 600) -> str:
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, f"{' '.join(cmd)}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheelhouse")
    sh([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
        "-w", str(out), str(REPO)], REPO, dict(os.environ))
    (built,) = out.glob("localeval-*.whl")
    return built


@pytest.mark.wheel
def test_the_wheel_carries_templates_manifest_example_and_docs(wheel: Path) -> None:
    archive = zipfile.ZipFile(wheel)
    names = set(archive.namelist())
    for template in sorted((REPO / "prompts").rglob("*.j2")):
        rel = template.relative_to(REPO / "prompts").as_posix()
        assert archive.read(f"localeval/_prompts/{rel}") == template.read_bytes(), rel
    assert archive.read("localeval/_models/manifest.toml") == (
        REPO / "models" / "manifest.toml").read_bytes()
    assert "localeval/examples/example.jsonl" in names
    assert "localeval/docs/metrics.md" in names
    assert not [n for n in names if n.endswith(MODEL_SUFFIXES) or n.startswith("models/")]
    assert not [n for n in names if n.startswith("localeval/_models/") and
                not n.endswith("manifest.toml")]


PROBE = """import json, localeval.paths as p, localeval.prompts as pr, localeval.models as m
print(json.dumps({"package": str(p.PACKAGE), "checkout": str(p.checkout_root()),
    "prompts": str(pr.PROMPTS_DIR), "manifest": str(m.bundled_manifest()),
    "models": str(m.models_dir()), "example": str(p.PACKAGE / "examples" / "example.jsonl")}))"""


def fresh_venv(root: Path) -> tuple[Path, Path]:
    """A venv with no site packages but its own; (its python, its site-packages)."""
    sh([sys.executable, "-m", "venv", str(root)], root.parent, clean_env())
    python = root / "bin" / "python"
    site = sh([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
              root.parent, clean_env()).strip()
    return python, Path(site)


def probe(python: Path, cwd: Path, env: dict[str, str], site: Path) -> dict[str, str]:
    """Where the installed localeval finds its data: all inside the venv's site-packages."""
    where = json.loads(sh([str(python), "-c", PROBE], cwd, env))
    assert where["checkout"] == "None"
    for key in ("package", "prompts", "manifest", "example"):
        assert Path(where[key]).is_relative_to(site), (key, where[key])
        assert Path(where[key]).exists(), (key, where[key])
    return where


def template_hashes() -> dict[str, str]:
    return {p.relative_to(REPO / "prompts").as_posix(): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in (REPO / "prompts").rglob("*.j2")}


@pytest.mark.wheel
def test_the_wheel_runs_the_example_outside_the_checkout(wheel: Path, tmp_path: Path) -> None:
    """The light check: the wheel alone (--no-index --no-deps) in a fresh venv; the installed
    dependencies come from this interpreter's site-packages through a .pth file (not its
    localeval: an editable install's hooks there are not run). The fake judge and the retrieval
    metrics on the bundled example: the templates render from the installed package."""
    python, site = fresh_venv(tmp_path / "venv")
    env = clean_env(XDG_CACHE_HOME=str(tmp_path / "xdg"), LOCALEVAL_ALLOW_FAKE_JUDGE="1")
    sh([str(python), "-m", "pip", "install", "-q", "--no-index", "--no-deps", "--find-links",
        str(wheel.parent), "localeval"], tmp_path, env)
    (site / "_deps_from_dev_venv.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    where = probe(python, tmp_path, env, site)
    assert where["models"] == str(tmp_path / "xdg" / "localeval" / "models")
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({
        "faithfulness_statements": [{"statements": [["A claim."]]}] * 50,
        "faithfulness_verdicts": [{"verdicts": [{"reason": "r", "verdict": 1}]}] * 50}))
    sh([str(tmp_path / "venv" / "bin" / "localeval"), "run", where["example"], "--out", "out",
        "--judge", "fake", "--fake-answers", str(answers), "--claims", "statements",
        "--metrics", "faithfulness,retrieval", "--no-cache", "--quiet"], tmp_path, env)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["metrics"]["faithfulness"]["count"] >= 2  # the one-sentence English rows
    assert summary["metrics"]["hit_rate"]["count"] == 4
    hashes = template_hashes()
    assert summary["prompts"] and all(hashes[k] == v for k, v in summary["prompts"].items())


def llama_wheel_cached() -> bool:
    proc = subprocess.run([sys.executable, "-m", "pip", "cache", "list", "llama_cpp_python"],
                          capture_output=True, text=True)
    return "llama_cpp_python" in proc.stdout


@pytest.mark.wheel
def test_air_gapped_recipe(tmp_path: Path) -> None:
    """install.md, *Air-gapped install*: scripts/wheelhouse.sh, a fresh venv, `pip install
    --no-index --find-links`, `models pull --from`, the example on the tiny judge, outside the
    checkout, with every index and hub switched off."""
    if not llama_wheel_cached():
        pytest.skip("pip's wheel cache has no llama-cpp-python (run scripts/setup.sh first)")
    judge, embedder = model_path("tiny"), model_path("tiny", "embedder")
    if not (judge.exists() and embedder.exists()):
        if os.environ.get("CI"):
            pytest.fail("the tiny models are missing in CI")
        pytest.skip("the tiny models are not pulled")
    started = time.perf_counter()
    house = tmp_path / "wheelhouse"
    sh(["bash", str(REPO / "scripts" / "wheelhouse.sh"), str(house)], REPO,
       {**os.environ, "PYTHON": sys.executable})
    built = time.perf_counter()
    python, site = fresh_venv(tmp_path / "venv")
    env = clean_env(XDG_CACHE_HOME=str(tmp_path / "xdg"))
    sh([str(python), "-m", "pip", "install", "-q", "--no-index", "--find-links", str(house),
        "localeval"], tmp_path, env)
    installed = time.perf_counter()
    where = probe(python, tmp_path, env, site)
    cli = str(tmp_path / "venv" / "bin" / "localeval")
    sh([cli, "models", "pull", "--profile", "tiny", "--from", str(judge.parent)], tmp_path, env)
    assert (Path(where["models"]) / judge.name).is_file()
    sh([cli, "run", where["example"], "--out", "out", "--profile", "tiny", "--quiet",
        "--metrics", "faithfulness,answer_similarity,retrieval"], tmp_path, env)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["judge"]["calls"] > 0 and summary["metrics"]["answer_similarity"]["count"] == 4
    hashes = template_hashes()
    assert summary["prompts"] and all(hashes[k] == v for k, v in summary["prompts"].items())
    done = time.perf_counter()
    print(f"air-gapped recipe: wheelhouse {built - started:.0f}s, install "
          f"{installed - built:.0f}s, pull + example {done - installed:.0f}s")
