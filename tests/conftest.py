"""Shared fixtures: an isolated answer cache, the fake judge runner, and the real models
(session-scoped, skipped when a model file is absent outside CI)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import pytest

from localeval.config import Settings
from localeval.judge.fake import ALLOW_ENV, FakeJudge
from localeval.models import load_manifest
from localeval.models.embed import HashEmbedder

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
EXAMPLE = REPO / "localeval" / "examples" / "example.jsonl"

# The fake judge is refused outside localeval's own tests (judge/fake.py); these are they. Set at
# import so that CLI runs in subprocesses inherit it.
os.environ[ALLOW_ENV] = "1"


class OpenJudge:
    """A session's real judge handed to a run: left open when the run ends (the session fixture
    closes it), with every request it is asked kept in `requests`."""

    def __init__(self, judge: Any) -> None:
        self.judge = judge
        self.requests: list[Any] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.judge, name)

    async def complete(self, request: Any) -> Any:
        self.requests.append(request)
        return await self.judge.complete(request)

    def close(self) -> None:
        pass


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Never read or write the user's real answer cache from tests."""
    os.environ["LOCALEVAL_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


def model_path(profile: str, role: str = "judge") -> Path:
    manifest = load_manifest()
    return manifest.get(manifest.profile(profile)[role]).path()


def _need(path: Path) -> Path:
    if not path.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{path} is missing in CI; scripts/test.sh should have pulled it")
        pytest.skip(
            f"{path.name} not pulled (bash scripts/setup.sh --profile tiny --profile small)"
        )
    return path


def shared_data(relative: str) -> Path:
    """A file of the project's shared data (`../shared/data/` beside the repository): the test
    fails in CI when it is missing, and is skipped elsewhere."""
    return _need(SHARED / "data" / relative)


def _llama_judge(profile: str, **kw: Any):  # type: ignore[no-untyped-def]
    pytest.importorskip("llama_cpp")
    from localeval import models
    from localeval.judge.llamacpp import open_engine

    manifest = load_manifest()
    spec = manifest.get(manifest.profile(profile)["judge"])
    path = _need(spec.path())
    return open_engine(path, models.expected_sha256(spec), parallel=1, **kw)


@pytest.fixture(scope="session")
def tiny_judge():  # type: ignore[no-untyped-def]
    """The 0.5B judge (plumbing only: too weak to judge)."""
    judge = _llama_judge("tiny", n_ctx=2048)
    yield judge
    judge.close()


@pytest.fixture(scope="session")
def small_judge():  # type: ignore[no-untyped-def]
    """The 1.5B judge, for the few quality checks."""
    judge = _llama_judge("small", n_ctx=4096)
    yield judge
    judge.close()


@pytest.fixture(scope="session")
def small_embedder():  # type: ignore[no-untyped-def]
    pytest.importorskip("sentence_transformers")
    from localeval import models
    from localeval.models.embed import SentenceTransformerEmbedder

    manifest = load_manifest()
    spec = manifest.get(manifest.profile("small")["embedder"])
    return SentenceTransformerEmbedder(_need(spec.path()), models.expected_sha256(spec))


def true_to_sentences(answers: list[dict], rows: Path = EXAMPLE) -> list[dict]:
    """Canned `faithfulness_statements` answers made true to their sentences: each placeholder
    ("sa") becomes its sentence followed by the placeholder, in the order the rows' sentences
    are asked. A statement that leaves its sentence out is replaced by the sentence (issue 29
    item 4), so a bare placeholder would change the number of claims."""
    from localeval.text import split_sentences

    sentences = iter(s for line in rows.read_text(encoding="utf-8").splitlines()
                     for s in split_sentences(json.loads(line)["answer"]))
    out = []
    for answer in answers:
        per = []
        for tags in answer["statements"]:
            sentence = next(sentences)
            per.append([f"{sentence} {tag}" for tag in tags])
        out.append({"statements": per})
    return out


def fake_run_args(
    data: Path, answers: Path, out: Path, *extra: str, metrics: str = "faithfulness"
) -> list[str]:
    """argv of `localeval run` on the fake judge (queued answers from a file), no cache, quiet."""
    return [
        "run", str(data), "--out", str(out), "--judge", "fake", "--fake-answers", str(answers),
        "--metrics", metrics, "--no-cache", "--quiet", "--claims", "statements", *extra,
    ]  # fmt: skip


@pytest.fixture
def fake_cli(tmp_path: Path):  # type: ignore[no-untyped-def]
    """`fake_cli(data, answers, out, *extra, metrics=...)` → exit status of `localeval run` on
    the fake judge; `answers` is a JSON-able object (written to a file) or a file path."""
    from localeval.cli import main

    def run_cli(data: Path, answers: Any, out: Path, *extra: str, metrics: str = "faithfulness"):  # type: ignore[no-untyped-def]
        if not isinstance(answers, Path):
            path = tmp_path / "fake-answers.json"
            path.write_text(json.dumps(answers), encoding="utf-8")
            answers = path
        return main(fake_run_args(data, answers, out, *extra, metrics=metrics))

    return run_cli


def run_fake(
    rows: Iterable[Mapping[str, Any]], answers: Any, *, out_dir: Path | None = None, **settings: Any
):  # type: ignore[no-untyped-def]
    """Run rows through the fake judge (queued raw answers) and the hash embedder, with the
    default settings unless `settings` says otherwise (tests of the statements the judge writes
    pass `claims="statements"`)."""
    from localeval.runner import run

    judge = FakeJudge(answers)
    outcome = run(
        list(rows),
        out_dir,
        Settings(no_cache=True, **settings),
        judge=judge,
        embedder=HashEmbedder(),
    )
    return outcome, judge
