"""refusal: the judge says whether the answer declines to answer (fake judge, queued answers)."""

from __future__ import annotations

import pytest

from localeval.metrics import REGISTRY, resolve
from localeval.report.kit import is_verdict
from tests.conftest import run_fake

NAME = "refusal"
STEP = "refusal_verdict"
REASON = "rubric_reason"
ROW = {"id": "a", "question": "When did the company go public?",
       "answer": "I don't know; the documents do not say."}


def test_a_judge_step_run_only_when_named() -> None:
    m = REGISTRY[NAME]
    assert m.steps == (STEP, REASON) and m.uses_judge and not m.default
    assert NAME not in [x.name for x in resolve(None)]
    assert is_verdict("refused", 1) and not is_verdict("refused", 0.5)


def test_a_refusal_scores_1_with_the_judges_probability_and_the_reason_after_it() -> None:
    answers = {STEP: [{"refused": 1, "_probs": [["refused", {"1": 0.72, "0": 0.18}]]}],
               REASON: [{"reason": "it says it does not know"}]}
    outcome, judge = run_fake([ROW], answers, metrics=[NAME])
    (record,) = outcome.records
    assert not record.errors
    assert record.scores == {NAME: 1.0, f"{NAME}.greedy": 1.0,
                             f"{NAME}.weighted": pytest.approx(0.8)}
    assert record.details[NAME] == {"reason": "it says it does not know", "refused": 1,
                                    "p_refused": 0.8}
    verdict, reason = judge.requests
    assert verdict.step == STEP and reason.step == REASON
    assert ROW["question"] in verdict.messages[1]["content"]
    assert ROW["answer"] in verdict.messages[1]["content"]
    assert "reason" not in verdict.messages[1]["content"]  # the verdict first, no reason asked
    assert reason.messages[:2] == verdict.messages  # the reason reads the verdict's prefix
    assert reason.messages[2] == {"role": "assistant", "content": '{"refused":1}'}


def test_the_verdict_request_is_the_same_with_and_without_explanations() -> None:
    got = []
    for explain in (True, False):
        answers = {STEP: [{"refused": 0}], REASON: [{"reason": "it answers"}]}
        _, judge = run_fake([ROW], answers, metrics=[NAME], explain=explain)
        got.append(judge.requests[0].model_dump_json())
    assert got[0] == got[1]


def test_an_answer_scores_0_and_without_explain_the_reason_is_left_out() -> None:
    row = {**ROW, "answer": "It went public in 1998."}
    outcome, judge = run_fake([row], {STEP: [{"refused": 0}]}, metrics=[NAME], explain=False)
    (record,) = outcome.records
    assert record.scores == {NAME: 0.0, f"{NAME}.greedy": 0.0}
    assert record.details[NAME] == {"refused": 0}
    assert "reason" not in judge.requests[0].messages[1]["content"]


def test_a_chinese_row_gets_the_chinese_template() -> None:
    row = {"id": "z", "question": "公司哪一年上市？", "answer": "抱歉，资料中没有提到。"}
    outcome, judge = run_fake([row], {STEP: [{"refused": 1}], REASON: [{"reason": "没有回答"}]},
                              metrics=[NAME])
    assert outcome.records[0].scores[NAME] == 1.0
    assert judge.requests[0].messages[1]["content"].startswith("任务：")


def test_needs_the_question_and_the_answer() -> None:
    outcome, judge = run_fake([{"id": "a", "answer": "I don't know."}], {}, metrics=[NAME])
    assert NAME in outcome.records[0].skipped and judge.requests == []
