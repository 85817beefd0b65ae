"""faithfulness end to end through the fake judge with `claims = "statements"`: anchored
statements, the checks after the verdict, bounded requests, retries and malformed answers."""

from __future__ import annotations

import json
from typing import Any

import pytest

from localeval.config import Settings
from localeval.judge.fake import FakeJudge
from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest
from localeval.models.embed import HashEmbedder
from localeval.runner import run
from tests.conftest import run_fake


def run_st(*args: Any, **kw: Any) -> Any:
    """These tests exercise the statements the judge writes (`claims = "statements"`)."""
    return run_fake(*args, claims="statements", **kw)


ROW = {
    "id": "s1",
    "question": "When was the tower built?",
    "answer": "It was built in 1889. It is red.",
    "contexts": ["The tower was completed in 1889. It stands in Paris."],
}
STATEMENTS = {"statements": [["The tower was built in 1889."], ["The tower is red."]]}
VERDICTS = {"verdicts": [{"verdict": 1}, {"verdict": 0}]}


def test_score_details_and_requests() -> None:
    outcome, judge = run_st([ROW], [STATEMENTS, VERDICTS], metrics=["faithfulness"])
    (rec,) = outcome.records
    assert rec.scores == {"faithfulness": 0.5, "faithfulness.greedy": 0.5,
                          "faithfulness.all_supported": 0.0} and not rec.errors
    details = rec.details["faithfulness"]
    assert [s["verdict"] for s in details["statements"]] == [1, 0]
    assert [s["sentence"] for s in details["statements"]] == [1, 2]
    assert details["sentences"] == ["It was built in 1889.", "It is red."]
    assert details["statements"][0]["reason"] == "the judge found it in the context"
    assert details["statements"][1]["reason"] == "the judge found no support in the context"
    steps = [r.step for r in judge.requests]
    assert steps == ["faithfulness_statements", "faithfulness_verdicts"]
    statement_prompt = judge.requests[0].messages[-1]["content"]
    assert "1. It was built in 1889.\n2. It is red." in statement_prompt
    schema = json.loads(judge.requests[0].answer_schema)
    outer = schema["properties"]["statements"]
    assert outer["minItems"] == outer["maxItems"] == 2  # one list per sentence
    assert outer["items"]["minItems"] == 1 and outer["items"]["items"]["maxLength"] <= 240
    verdict_prompt = judge.requests[1].messages[-1]["content"]
    assert "1. The tower was built in 1889." in verdict_prompt
    assert "[1] The tower was completed" in verdict_prompt
    assert verdict_prompt.index("Task:") < verdict_prompt.index("Context:")  # fixed part first
    verdict_schema = json.loads(judge.requests[1].answer_schema)
    assert list(verdict_schema["$defs"]["BareVerdict"]["properties"]) == ["verdict"]
    assert rec.language == "en"


def test_novel_details_overrule_the_judges_support() -> None:
    row = ROW | {"answer": "It was built in 1889 by Gustave Eiffel. It was finished in 1890."}
    statements = {"statements": [
        ["The tower was built in 1889.", "Gustave Eiffel built the tower."],
        ["The tower was finished in 1890."]]}
    verdicts = {"verdicts": [{"verdict": 1}, {"verdict": 1}, {"verdict": 1}]}
    outcome, _ = run_st([row], [statements, verdicts], metrics=["faithfulness"])
    (rec,) = outcome.records
    assert rec.scores == {"faithfulness": 1 / 3, "faithfulness.greedy": 1 / 3,
                          "faithfulness.all_supported": 0.0}
    s = rec.details["faithfulness"]["statements"]
    assert [x["judge_verdict"] for x in s] == [1, 1, 1] and [x["verdict"] for x in s] == [1, 0, 0]
    assert s[1]["reason"] == "not in the context: Gustave, Eiffel"
    assert s[2]["novel_details"] == ["1890"] and "1890" in s[2]["reason"]


def test_malformed_judge_answer_is_that_samples_error() -> None:
    rows = [ROW | {"answer": "It was built in 1889."}, ROW | {"id": "s2"}]
    outcome, _ = run_st(
        rows,
        {
            "faithfulness_statements": ['{"statements": [["a"', STATEMENTS],
            "faithfulness_verdicts": [VERDICTS],
        },
        metrics=["faithfulness"],
    )
    bad, good = outcome.records
    assert bad.scores == {} and "does not match the schema" in bad.errors["faithfulness"]
    assert good.scores == {"faithfulness": 0.5, "faithfulness.greedy": 0.5,
                           "faithfulness.all_supported": 0.0}
    assert outcome.summary["metrics"]["faithfulness"]["errors"] == 1


def test_wrong_number_of_statement_lists_is_an_error_not_a_score() -> None:
    outcome, _ = run_st([ROW], [{"statements": [["The tower was built in 1889."]]}],
                          metrics=["faithfulness"])
    assert "faithfulness" in outcome.records[0].errors and not outcome.records[0].scores


def test_a_sentence_without_statements_stands_for_itself() -> None:
    outcome, judge = run_st(
        [ROW], [{"statements": [["The tower was built in 1889."], ["……"]]}, VERDICTS],
        metrics=["faithfulness"])
    (rec,) = outcome.records
    assert [s["statement"] for s in rec.details["faithfulness"]["statements"]] == [
        "The tower was built in 1889.", "It is red."]
    assert "2. It is red." in judge.requests[1].messages[-1]["content"]


def test_no_sentence_is_unscored_with_reason() -> None:
    outcome, judge = run_st([ROW | {"answer": " - \n"}], [], metrics=["faithfulness"])
    (rec,) = outcome.records
    assert rec.scores == {"faithfulness": None} and not judge.requests
    assert "no sentence" in rec.details["faithfulness"]["unscored_reason"]


def test_missing_field_is_skipped_with_reason_and_running_out_of_answers_is_an_error() -> None:
    rows = [ROW | {"id": "noctx", "contexts": []}, ROW]
    outcome, _ = run_st(rows, [STATEMENTS], metrics=["faithfulness"])
    noctx, short = outcome.records
    assert "contexts" in noctx.skipped["faithfulness"]
    assert "no queued answer" in short.errors["faithfulness"]


class LengthOnce(FakeJudge):
    """Like FakeJudge, but its first answer ends at max_tokens."""

    def __init__(self, answers: Any) -> None:
        super().__init__(answers)
        self.cut = False

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        reply = await super().complete(request)
        if not self.cut:
            self.cut = True
            return reply.model_copy(update={"finish_reason": "length"})
        return reply


def test_a_request_cut_at_max_tokens_is_retried_once_split_in_halves() -> None:
    judge = LengthOnce({
        "faithfulness_statements": ['{"statements": [["x"', {"statements": [["The tower was "
                                    "built in 1889."]]}, {"statements": [["The tower is red."]]}],
        "faithfulness_verdicts": [VERDICTS],
    })
    settings = Settings(no_cache=True, claims="statements", metrics=["faithfulness"])
    outcome = run([ROW], None, settings, judge=judge, embedder=HashEmbedder())
    (rec,) = outcome.records
    assert rec.scores == {"faithfulness": 0.5, "faithfulness.greedy": 0.5,
                          "faithfulness.all_supported": 0.0} and not rec.errors
    assert rec.details["faithfulness"]["judge_retries"] == 1
    assert outcome.summary["metrics"]["faithfulness"]["judge_retries"] == 1
    prompts = [r.messages[-1]["content"] for r in judge.requests[:3]]
    assert "sentences 1 to 2" in prompts[0] and "sentences 1 to 1" in prompts[1]
    assert "sentences 2 to 2" in prompts[2]


def test_a_degenerate_answer_is_retried_once_split_in_halves() -> None:
    loop = "the tower the tower the tower the tower the tower the tower"
    outcome, _ = run_st([ROW], {
        "faithfulness_statements": [{"statements": [[loop], ["The tower is red."]]},
                                    {"statements": [["The tower was built in 1889."]]},
                                    {"statements": [["The tower is red."]]}],
        "faithfulness_verdicts": [VERDICTS],
    }, metrics=["faithfulness"])
    (rec,) = outcome.records
    assert rec.details["faithfulness"]["judge_retries"] == 1
    assert rec.details["faithfulness"]["statements"][0]["statement"] == (
        "The tower was built in 1889.")


def test_long_answers_go_in_groups_whose_longest_answer_fits_max_tokens() -> None:
    answer = " ".join(f"The tower has feature number {i} on floor {i}." for i in range(1, 7))
    row = ROW | {"answer": answer}
    outcome, judge = run_st([row], _echo_answers(row["answer"]), metrics=["faithfulness"],
                              max_tokens=300)
    (rec,) = outcome.records
    assert not rec.errors, rec.errors
    stmt_requests = [r for r in judge.requests if r.step == "faithfulness_statements"]
    assert len(stmt_requests) >= 2
    for r in stmt_requests:
        outer = json.loads(r.answer_schema)["properties"]["statements"]
        n, k = outer["maxItems"], outer["items"]["maxItems"]
        assert n * k * (outer["items"]["items"]["maxLength"] + 4) + 16 <= 300
    assert len(rec.details["faithfulness"]["statements"]) == 6


def _echo_answers(answer: str) -> dict[str, list[Any]]:
    """Statements that copy each sentence, then a verdict of no support for each."""
    from localeval.metrics.claims.split import groups
    from localeval.text import split_sentences

    sentences = split_sentences(answer)
    stmts = [{"statements": [[s] for s in sentences[a:b]]} for a, b in groups(sentences, 300)]
    verdicts = [{"verdicts": [{"verdict": 0}] * len(sentences)}]  # bare: one request
    return {"faithfulness_statements": stmts, "faithfulness_verdicts": verdicts}


def test_chinese_sample_uses_chinese_templates() -> None:
    row = {
        "id": "zh",
        "question": "裁决有什么影响?",
        "answer": "裁决影响了全球。",
        "contexts": ["裁决产生了全球影响。"],
    }
    outcome, judge = run_st(
        [row],
        [
            {"statements": [["裁决影响了全球。"]]},
            {"verdicts": [{"verdict": 1}]},
        ],
        metrics=["faithfulness"],
    )
    assert outcome.records[0].language == "zh" and outcome.records[0].scores["faithfulness"] == 1.0
    assert "原子陈述" in judge.requests[0].messages[-1]["content"]


def test_a_statement_repeated_from_an_earlier_sentence_is_dropped() -> None:
    outcome, _ = run_st([ROW], [
        {"statements": [["The tower was built in 1889."], ["The tower was built in 1889."]]},
        VERDICTS],
        metrics=["faithfulness"])
    (rec,) = outcome.records
    assert [(s["statement"], s["sentence"]) for s in rec.details["faithfulness"]["statements"]] == [
        ("The tower was built in 1889.", 1), ("It is red.", 2)]  # the sentence stands for itself


class ProbingJudge(FakeJudge):
    """The fake judge, plus the engine's verdict probabilities (P("1") given per verdict)."""

    def __init__(self, answers: dict[str, list[Any]], p_one: list[float]) -> None:
        super().__init__(answers)
        self.p_one = p_one

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        reply = await super().complete(request)
        if "verdict" in request.probe_fields:
            reply.field_probs = [FieldProbs(field="verdict", probs={"1": p, "0": 1 - p})
                                 for p in self.p_one]
        return reply


def test_soft_faithfulness_is_the_mean_probability_of_support_zero_where_overruled() -> None:
    row = {"id": "p", "question": "When was the tower built?", "contexts": ["Built in 1889."],
           "answer": "It was built in 1889. It was built in 1920."}
    judge = ProbingJudge({
        "faithfulness_statements": [{"statements": [["The tower was built in 1889."],
                                                    ["The tower was built in 1920."]]}],
        "faithfulness_verdicts": [{"verdicts": [{"verdict": 1}, {"verdict": 1}]}],
    }, p_one=[0.9, 0.8])
    outcome = run([row], None, Settings(no_cache=True, claims="statements",
                                        metrics=["faithfulness"]), judge=judge,
                  embedder=HashEmbedder())
    (rec,) = outcome.records
    assert rec.scores["faithfulness"] == 0.5  # 1920 is not in the context: overruled
    assert rec.scores["faithfulness.weighted"] == pytest.approx(0.45)  # (0.9 + 0) / 2
    assert rec.scores["faithfulness.greedy"] == 0.5  # the headline, written under its suffix too
    assert [s["p_supported"] for s in rec.details["faithfulness"]["statements"]] == [0.9, 0.0]


QUOTED = ("The tower was completed in 1889 by a large team of workers. It stands in Paris. "
          "Nobody knows its colour.")


def test_a_sentence_quoted_from_the_context_is_judged_and_marked() -> None:
    row = ROW | {"answer": "The tower was completed in 1889 by a large team of workers! "
                           "It is red.",
                 "contexts": [QUOTED]}
    outcome, judge = run_st([row], {
        "faithfulness_statements": [{"statements": [
            ["The tower was completed in 1889 by a large team of workers."],
            ["The tower is red."]]}],
        "faithfulness_verdicts": [{"verdicts": [{"verdict": 1}, {"verdict": 0}]}],
    }, metrics=["faithfulness"])
    (rec,) = outcome.records
    assert rec.scores == {"faithfulness": 0.5, "faithfulness.greedy": 0.5,
                          "faithfulness.all_supported": 0.0} and not rec.errors
    first, second = rec.details["faithfulness"]["statements"]
    assert first["quoted"] is True and first["verdict"] == 1 and first["rule"] == "judge"
    assert second["sentence"] == 2 and second["verdict"] == 0 and "quoted" not in second
    assert rec.details["faithfulness"]["rules"]["quote"] == 1
    statement_prompt, verdict_prompt = (r.messages[-1]["content"] for r in judge.requests)
    assert "sentences 1 to 2" in statement_prompt
    judged = verdict_prompt.rsplit("Statements:", 1)[1]
    assert "1. The tower was completed" in judged and "2. The tower is red." in judged


def test_a_short_sentence_found_in_the_context_is_still_judged() -> None:
    row = ROW | {"answer": "It stands in Paris.", "contexts": [QUOTED]}
    outcome, judge = run_st([row], {
        "faithfulness_statements": [{"statements": [["The tower stands in Paris."]]}],
        "faithfulness_verdicts": [{"verdicts": [{"verdict": 1}]}],
    }, metrics=["faithfulness"])
    (rec,) = outcome.records
    assert rec.scores == {"faithfulness": 1.0, "faithfulness.greedy": 1.0,
                          "faithfulness.all_supported": 1.0}
    assert "quoted" not in rec.details["faithfulness"]["statements"][0]
    assert [r.step for r in judge.requests] == ["faithfulness_statements",
                                                "faithfulness_verdicts"]


def test_a_question_is_judged_and_claims_nothing_only_when_the_judge_agrees() -> None:
    row = ROW | {"answer": "When was the tower built? It was built in 1889."}
    outcome, judge = run_st([row], {
        "faithfulness_statements": [{"statements": [["When was the tower built?"],
                                                    ["The tower was built in 1889."]]}],
        "faithfulness_verdicts": [{"verdicts": [{"fact": 0, "verdict": 1},
                                                {"fact": 1, "verdict": 1}]}],
    }, metrics=["faithfulness"])
    (rec,) = outcome.records
    assert rec.scores == {"faithfulness": 1.0, "faithfulness.greedy": 1.0,
                          "faithfulness.all_supported": 1.0}
    assert rec.details["faithfulness"]["no_claim"] == [1]
    assert [s["sentence"] for s in rec.details["faithfulness"]["statements"]] == [2]
    assert "sentences 1 to 2" in judge.requests[0].messages[-1]["content"]
    assert "fact" in judge.requests[1].answer_schema  # asked in the verdicts' own request

    outcome, judge = run_st([ROW | {"answer": "Was it built in 1889？ Who knows?"}], {
        "faithfulness_statements": [{"statements": [["Was it built in 1889？"],
                                                    ["Who knows?"]]}],
        "faithfulness_verdicts": [{"verdicts": [{"fact": 0, "verdict": 1},
                                                {"fact": 0, "verdict": 1}]}],
    }, metrics=["faithfulness"])
    (rec,) = outcome.records
    assert rec.scores == {"faithfulness": None} and len(judge.requests) == 2
    assert "every sentence is a question" in rec.details["faithfulness"]["unscored_reason"]
    # a question the judge finds unsupported stays a claim: leaving it out would raise the score
    outcome, judge = run_st([row], {
        "faithfulness_statements": [{"statements": [["When was the tower built?"],
                                                    ["The tower was built in 1889."]]}],
        "faithfulness_verdicts": [{"verdicts": [{"fact": 0, "verdict": 0},
                                                {"fact": 1, "verdict": 1}]}],
    }, metrics=["faithfulness"])
    assert outcome.records[0].scores == {"faithfulness": 0.5, "faithfulness.greedy": 0.5,
                                         "faithfulness.all_supported": 0.0}


def test_soft_context_recall_of_a_quoted_sentence_is_the_judges_probability() -> None:
    row = {"id": "r", "question": "When was the tower built?", "contexts": [QUOTED],
           "ground_truth": "The tower was completed in 1889 by a large team of workers. "
                           "It is red."}
    judge = ProbingJudge({
        "faithfulness_statements": [{"statements": [
            ["The tower was completed in 1889 by a large team of workers."],
            ["The tower is red."]]}],
        "context_recall_verdicts": [{"verdicts": [{"verdict": 1}, {"verdict": 0}]}],
    }, p_one=[0.8, 0.3])
    outcome = run([row], None,
                  Settings(no_cache=True, claims="statements", metrics=["context_recall"]),
                  judge=judge, embedder=HashEmbedder())
    (rec,) = outcome.records
    assert rec.scores["context_recall"] == 0.5
    assert rec.scores["context_recall.weighted"] == pytest.approx(0.55)  # (0.8 + 0.3) / 2


def test_sentences_around_a_question_share_one_request() -> None:
    row = ROW | {"answer": "It was built in 1889. What colour? It is red."}
    statements = {"statements": [["The tower was built in 1889."], ["What colour?"],
                                 ["The tower is red."]]}
    verdicts = {"verdicts": [{"fact": 1, "verdict": 1}, {"fact": 0, "verdict": 1},
                             {"fact": 1, "verdict": 0}]}
    outcome, judge = run_st([row], [statements, verdicts], metrics=["faithfulness"])
    (rec,) = outcome.records
    assert rec.scores == {"faithfulness": 0.5, "faithfulness.greedy": 0.5,
                          "faithfulness.all_supported": 0.0} and not rec.errors
    assert [s["sentence"] for s in rec.details["faithfulness"]["statements"]] == [1, 3]
    first = judge.requests[0]
    assert "sentences 1 to 3" in first.messages[-1]["content"]  # the question is asked for too
    assert "exactly 3 lists" in first.messages[-1]["content"]
    assert json.loads(first.answer_schema)["properties"]["statements"]["maxItems"] == 3
