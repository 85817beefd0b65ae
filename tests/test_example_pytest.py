"""How a RAG project gates its answers in its own pytest suite (localeval/docs/api.md, *pytest*).

Copy this file into your project, replace `my_rag_pipeline` with yours and the rows with your
questions. `assert_scores` evaluates through `localeval.evaluate` with the local judge (profile
small: the 1.5B model) and the answer cache: a second run on unchanged answers sends no judge
request. A failure lists each failing sample with the claims the judge could not support and why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from localeval.testing import assert_scores
from tests.conftest import model_path

pytestmark = pytest.mark.model_small

CONTEXT = (
    "Insulin was discovered in 1921 by Frederick Banting and Charles Best at the University of "
    "Toronto, working in the laboratory of John Macleod."
)
RIGHT = "Insulin was discovered by Frederick Banting and Charles Best in 1921."
WRONG = "Insulin was discovered by Marie Curie in 1935 in Paris."  # planted


def my_rag_pipeline(question: str, planted_error: bool = False) -> tuple[str, list[str]]:
    """Stands in for your retrieval + generation: (answer, retrieved contexts)."""
    return (WRONG if planted_error else RIGHT), [CONTEXT]


def rows(planted_error: bool = False) -> list[dict]:
    question = "Who discovered insulin?"
    answer, contexts = my_rag_pipeline(question, planted_error)
    return [{"id": "insulin", "question": question, "answer": answer, "contexts": contexts}]


@pytest.fixture
def judge_settings(tmp_path: Path) -> dict:
    if not model_path("small").exists():
        pytest.skip("the small judge is not pulled (localeval models pull --profile small)")
    pytest.importorskip("llama_cpp")
    # your suite would keep the default cache (~/.cache/localeval) so reruns are instant
    return {"profile": "small", "cache": tmp_path / "answers.sqlite", "language": "en"}


def test_the_right_answer_passes_and_a_rerun_makes_no_judge_call(judge_settings: dict) -> None:
    first = assert_scores(rows(), faithfulness=0.8, **judge_settings)
    assert first.judge_calls > 0
    again = assert_scores(rows(), faithfulness=0.8, **judge_settings)
    assert again.judge_calls == 0 and again.summary["judge"]["cached"] == first.judge_calls


def test_a_planted_wrong_answer_fails_naming_the_claim(judge_settings: dict) -> None:
    with pytest.raises(AssertionError) as info:
        assert_scores(rows(planted_error=True), faithfulness=0.8, **judge_settings)
    text = str(info.value)
    assert "sample 'insulin'" in text and "faithfulness 0.000 < 0.8" in text
    assert "Marie Curie" in text
