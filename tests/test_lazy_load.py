"""The judge model loads only when a request misses the answer cache (0.5B model)."""

from __future__ import annotations

from pathlib import Path

import pytest

from localeval.config import Settings

ROWS = [{"id": "r1", "question": "Who wrote Hamlet?", "answer": "Shakespeare wrote Hamlet.",
         "contexts": ["Hamlet is a tragedy written by William Shakespeare."]}]


@pytest.mark.model
def test_a_rerun_served_from_the_cache_loads_no_model(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp")
    from conftest import _need, model_path

    from localeval.runner import run

    _need(model_path("tiny"))
    settings = Settings(profile="tiny", metrics=["faithfulness"], cache=tmp_path / "c.sqlite",
                        parallel=1, n_ctx=2048)
    first = run(ROWS, tmp_path / "a", settings)
    second = run(ROWS, tmp_path / "b", settings)
    assert first.summary["judge"]["calls"] > 0
    assert first.summary["models"]["judge"]["load_seconds"] is not None
    assert second.summary["judge"]["calls"] == 0
    assert second.summary["models"]["judge"]["load_seconds"] is None
    assert [r.scores for r in second.records] == [r.scores for r in first.records]
