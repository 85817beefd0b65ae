"""faithfulness end to end through the fake judge: the real parsing path, malformed answers."""

from __future__ import annotations

from tests.conftest import run_fake

ROW = {
    "id": "s1",
    "question": "When was the tower built?",
    "answer": "It was built in 1889. It is red.",
    "contexts": ["The tower was completed in 1889."],
}
STATEMENTS = {"statements": ["The tower was built in 1889.", "The tower is red."]}
VERDICTS = {
    "verdicts": [
        {"reason": "context says 1889", "verdict": 1},
        {"reason": "colour not mentioned", "verdict": 0},
    ]
}


def test_score_details_and_requests() -> None:
    outcome, judge = run_fake([ROW], [STATEMENTS, VERDICTS], metrics=["faithfulness"])
    (rec,) = outcome.records
    assert rec.scores == {"faithfulness": 0.5} and not rec.errors
    assert [s["verdict"] for s in rec.details["faithfulness"]["statements"]] == [1, 0]
    steps = [r.step for r in judge.requests]
    assert steps == ["faithfulness_statements", "faithfulness_verdicts"]
    verdict_prompt = judge.requests[1].messages[-1]["content"]
    assert (
        "1. The tower was built in 1889." in verdict_prompt
        and "[1] The tower was completed" in verdict_prompt
    )
    assert rec.language == "en"


def test_malformed_judge_answer_is_that_samples_error() -> None:
    rows = [ROW, ROW | {"id": "s2"}]
    outcome, _ = run_fake(
        rows,
        {
            "faithfulness_statements": ['{"statements": ["a"', STATEMENTS],
            "faithfulness_verdicts": [VERDICTS],
        },
        metrics=["faithfulness"],
    )
    bad, good = outcome.records
    assert bad.scores == {} and "does not match the schema" in bad.errors["faithfulness"]
    assert good.scores == {"faithfulness": 0.5}
    assert outcome.summary["metrics"]["faithfulness"]["errors"] == 1


def test_wrong_number_of_verdicts_is_an_error_not_a_score() -> None:
    one_verdict = {"verdicts": [{"reason": "x", "verdict": 1}]}
    outcome, _ = run_fake([ROW], [STATEMENTS, one_verdict], metrics=["faithfulness"])
    assert "faithfulness" in outcome.records[0].errors and not outcome.records[0].scores


def test_no_statements_is_unscored_with_reason() -> None:
    outcome, _ = run_fake([ROW], [{"statements": []}], metrics=["faithfulness"])
    (rec,) = outcome.records
    assert rec.scores == {"faithfulness": None}
    assert "no statements" in rec.details["faithfulness"]["unscored_reason"]


def test_missing_field_is_skipped_with_reason_and_running_out_of_answers_is_an_error() -> None:
    rows = [ROW | {"id": "noctx", "contexts": []}, ROW]
    outcome, _ = run_fake(rows, [STATEMENTS], metrics=["faithfulness"])
    noctx, short = outcome.records
    assert "contexts" in noctx.skipped["faithfulness"]
    assert "no queued answer" in short.errors["faithfulness"]


def test_chinese_sample_uses_chinese_templates() -> None:
    row = {
        "id": "zh",
        "question": "裁决有什么影响?",
        "answer": "裁决影响了全球。",
        "contexts": ["裁决产生了全球影响。"],
    }
    outcome, judge = run_fake(
        [row],
        [
            {"statements": ["裁决影响了全球。"]},
            {"verdicts": [{"reason": "上下文提到", "verdict": 1}]},
        ],
        metrics=["faithfulness"],
    )
    assert outcome.records[0].language == "zh" and outcome.records[0].scores["faithfulness"] == 1.0
    assert "原子陈述" in judge.requests[0].messages[-1]["content"]
