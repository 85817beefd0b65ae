"""The embedder loads in a thread while the judge starts on the samples: records wait for that
load, and a load that fails stops the run with its one error, as a load before the run did."""

from __future__ import annotations

import concurrent.futures
import json
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from localeval.cli import main
from localeval.config import Settings
from localeval.errors import ModelError
from localeval.models import backends
from localeval.models.embed import HashEmbedder, SentenceTransformerEmbedder
from localeval.runner import run
from tests.conftest import EXAMPLE
from tests.test_estimate import SchemaJudge

ROWS = [json.loads(line) for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
SETTINGS = Settings(no_cache=True, metrics=["faithfulness", "answer_relevance"],
                    claims="sentences")


class LoadingEmbedder(HashEmbedder):
    """The hash embedder behind a load that finishes, or fails with `error`, `after` seconds
    from now."""

    def __init__(self, after: float, error: str | None = None) -> None:
        self.load: concurrent.futures.Future[Any] = concurrent.futures.Future()
        self.load.set_running_or_notify_cancel()

        def finish() -> None:
            if error is None:
                self.load.set_result(self)
            else:
                self.load.set_exception(ModelError(error))

        threading.Timer(after, finish).start()

    def encode(self, texts: list[str]) -> np.ndarray:
        self.load.result()  # the load's failure, as SentenceTransformerEmbedder raises it
        return super().encode(texts)


def _lines(folder: Path) -> list[dict[str, Any]]:
    text = (folder / "results.jsonl").read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def _scored(records: list[Any]) -> list[tuple[str, dict, dict]]:
    return [(r.id, r.scores, r.details) for r in records]


def test_records_wait_for_the_load_and_equal_those_of_a_loaded_embedder(tmp_path: Path) -> None:
    loaded = run(ROWS, tmp_path / "a", SETTINGS, judge=SchemaJudge(), embedder=HashEmbedder())
    later = run(ROWS, tmp_path / "b", SETTINGS, judge=SchemaJudge(),
                embedder=LoadingEmbedder(0.3))
    assert _scored(later.records) == _scored(loaded.records)
    assert all(r.scores and not r.errors for r in later.records)
    assert len(_lines(tmp_path / "b")) == len(ROWS)


def test_a_load_that_fails_stops_the_run_with_its_error_and_no_record_holds_it(
        tmp_path: Path) -> None:
    with pytest.raises(ModelError, match="could not load the embedder at x: broken"):
        run(ROWS, tmp_path / "o", SETTINGS, judge=SchemaJudge(),
            embedder=LoadingEmbedder(0.2, "could not load the embedder at x: broken"))
    assert not any(r["errors"] for r in _lines(tmp_path / "o"))


def test_the_cli_says_a_failed_load_in_one_line_and_exits_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    failing = LoadingEmbedder(0.2, "could not load the embedder at x: broken")
    monkeypatch.setattr(backends, "make_embedder", lambda s, **_: (failing, {"name": "x"}))
    rc = main(["run", str(EXAMPLE), "--out", str(tmp_path / "o"), "--metrics",
               "answer_similarity", "--no-cache", "--quiet"])
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2
    assert err == ["localeval: error: could not load the embedder at x: broken"]
    assert _lines(tmp_path / "o") == []


def test_a_sentence_transformers_load_in_a_thread_raises_where_it_is_used(
        tmp_path: Path) -> None:
    (tmp_path / "config.json").write_text('{"x": 1}', encoding="utf-8")
    pytest.importorskip("sentence_transformers")
    embedder = SentenceTransformerEmbedder(tmp_path, "sha", in_thread=True)
    with pytest.raises(ModelError, match="could not load the embedder at"):
        embedder.encode(["a"])
    assert embedder.load.cancel() is False  # a waiter's cancel never cancels the load


def test_a_load_in_a_thread_gives_the_vectors_of_a_load_now(small_embedder) -> None:  # type: ignore[no-untyped-def]
    again = SentenceTransformerEmbedder(small_embedder.path, small_embedder.fingerprint,
                                        in_thread=True)
    texts = ["The Tay Bridge is painted grey.", "泰桥漆成灰色。"]
    assert np.array_equal(again.encode(texts), small_embedder.encode(texts))
