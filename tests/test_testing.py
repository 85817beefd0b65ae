"""localeval.testing.assert_scores on the fake judge: passes, fails with the failing samples'
statements and reasons, reruns from the answer cache with no judge call (issue 19, item 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from localeval.errors import UsageError
from localeval.judge.fake import FakeJudge
from localeval.models.embed import HashEmbedder
from localeval.testing import assert_scores, explain

CONTEXT = "Insulin was discovered in 1921 by Frederick Banting and Charles Best in Toronto."
RIGHT = {"id": "right", "question": "Who discovered insulin?", "contexts": [CONTEXT],
         "answer": "Banting and Best discovered insulin in 1921."}
WRONG = {"id": "wrong", "question": "Who discovered insulin?", "contexts": [CONTEXT],
         "answer": "Marie Curie discovered insulin in 1935."}
STATEMENTS = {"right": {"statements": [["Banting and Best discovered insulin in 1921."]]},
              "wrong": {"statements": [["Marie Curie discovered insulin in 1935."]]}}
VERDICT = {1: {"verdicts": [{"reason": "the context names Banting and Best", "verdict": 1}]},
           0: {"verdicts": [{"reason": "the context names Banting and Best, not Curie",
                             "verdict": 0}]}}


def judge_for(*rows: dict) -> FakeJudge:
    """Queued answers in row order (one sample at a time keeps the order)."""
    return FakeJudge({
        "faithfulness_statements": [STATEMENTS[r["id"]] for r in rows],
        "faithfulness_verdicts": [VERDICT[int(r["id"] == "right")] for r in rows],
    })


def settings(tmp_path: Path, judge: FakeJudge) -> dict:
    return {"judge": judge, "embedder": HashEmbedder(), "claims": "statements",
            "cache": tmp_path / "answers.sqlite", "parallel": 1}


def test_passing_rows_return_the_results(tmp_path: Path) -> None:
    res = assert_scores([RIGHT], faithfulness=0.8, **settings(tmp_path, judge_for(RIGHT)))
    assert res.scores("faithfulness") == {"right": 1.0} and res.judge_calls == 2


def test_a_wrong_answer_fails_with_its_statement_and_reason(tmp_path: Path) -> None:
    with pytest.raises(AssertionError) as info:
        assert_scores([RIGHT, WRONG], faithfulness=0.8,
                      **settings(tmp_path, judge_for(RIGHT, WRONG)))
    text = str(info.value)
    assert "1 of 2 samples below the thresholds (faithfulness >= 0.8)" in text
    assert "sample 'wrong'" in text and "sample 'right'" not in text
    assert "faithfulness 0.000 < 0.8" in text
    assert "'Marie Curie discovered insulin in 1935.'" in text
    assert "no support in the context; not in the context: 1935" in text  # the reason


def test_a_rerun_is_served_by_the_answer_cache(tmp_path: Path) -> None:
    first = assert_scores([RIGHT], faithfulness=0.8, **settings(tmp_path, judge_for(RIGHT)))
    again = assert_scores([RIGHT], faithfulness=0.8, **settings(tmp_path, FakeJudge([])))
    assert first.judge_calls == 2 and again.judge_calls == 0
    assert again.summary["judge"]["cached"] == 2


def test_on_mean_gates_the_mean_and_lists_the_samples_below(tmp_path: Path) -> None:
    kw = settings(tmp_path, judge_for(RIGHT, WRONG))
    res = assert_scores([RIGHT, WRONG], faithfulness=0.5, on="mean", **kw)
    assert res.mean("faithfulness") == 0.5
    with pytest.raises(AssertionError, match=r"(?s)mean 0.5000 < 0.6.*sample 'wrong'"):
        assert_scores([RIGHT, WRONG], faithfulness=0.6, on="mean",
                      **settings(tmp_path, FakeJudge([])))  # cached: no call


def test_skipped_and_unknown_keys_fail_clearly(tmp_path: Path) -> None:
    no_context = {"id": "bare", "question": "q", "answer": "a"}
    with pytest.raises(AssertionError, match="faithfulness: skipped: needs"):
        assert_scores([no_context], faithfulness=0.5, **settings(tmp_path, FakeJudge([])))
    with pytest.raises(UsageError, match="needs a threshold"):
        assert_scores([RIGHT], profile="small")
    with pytest.raises(UsageError, match="did you mean"):
        assert_scores([RIGHT], {"faithfulness.sotf": 0.5},
                      **settings(tmp_path, judge_for(RIGHT)))


def test_explain_falls_back_to_the_details() -> None:
    assert explain({"generated_questions": ["Who?"], "unscored_reason": "x"}) == [
        '{"generated_questions": ["Who?"]}'
    ]
    many = {"statements": [{"statement": f"s{i}", "verdict": 0} for i in range(14)]}
    assert explain(many)[-1] == "... and 2 more"
