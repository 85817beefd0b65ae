"""The claim matrix and the diagnosis metrics (metrics/claims/matrix.py, metrics/diagnosis.py)
through a judge that entails a statement when its material holds it word for word: the
arithmetic of each class, the undefined cases, the requests shared with faithfulness,
context_recall and answer_correctness, and the same bytes whatever else is in the run."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from localeval.config import Settings
from localeval.judge.interface import JudgeReply, JudgeRequest
from localeval.metrics.claims.matrix import ClaimMatrix, Row, diagnose
from localeval.metrics.claims.record import Verdict
from localeval.models.embed import HashEmbedder
from localeval.runner import run

DIAGNOSIS = ["claim_recall", "context_utilization", "noise_sensitivity", "hallucination",
             "self_knowledge"]


class OracleJudge:
    """Verdict 1 for a numbered statement that the prompt's material (everything before
    "Statements:") holds word for word, else 0; records every request."""

    name = "oracle"
    fingerprint = "oracle-judge"

    def __init__(self) -> None:
        self.requests: list[JudgeRequest] = []

    def sampling_key(self) -> str:
        return "oracle"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        text = request.messages[-1]["content"]
        material, _, rest = text.rpartition("Statements:")  # the last: after the example
        for marker in ("Context:", "Reference answer:", "Answer to be graded:"):
            material = material.rsplit(marker, 1)[-1]
        material = material.casefold()
        statements = re.findall(r"^\d+\. (.+)$", rest, flags=re.MULTILINE)
        verdicts = []
        for s in statements:
            claim = re.sub(r"^Q: .*? A: ", "", s).strip().rstrip(".").casefold()
            verdicts.append({"verdict": int(claim in material)})
        if "fact" in request.answer_schema:
            verdicts = [{"fact": 1, **v} for v in verdicts]
        return JudgeReply(text=json.dumps({"verdicts": verdicts}), finish_reason="stop")

    def close(self) -> None:
        pass


ROW = {
    "id": "paris",
    "question": "Tell me about Paris.",
    "answer": ("Paris is the capital city of France. Paris has three million people in total. "
               "The Louvre museum first opened in the year 1793. Paris lies on the continent "
               "of Europe. The Seine river is nine hundred kilometres long."),
    "ground_truth": ("Paris is the capital city of France. Paris has two million people in "
                     "total. Paris lies on the continent of Europe. Paris hosted the Summer "
                     "Olympic Games in 1900."),
    "contexts": ["Paris is the capital city of France. The Seine river is nine hundred "
                 "kilometres long.",
                 "Lyon is a large city. Paris has three million people in total.",
                 "Paris hosted the Summer Olympic Games in 1900."],
}


def run_oracle(rows: list[dict[str, Any]], metrics: list[str], **settings: Any):  # type: ignore[no-untyped-def]
    judge = OracleJudge()
    outcome = run(rows, None, Settings(no_cache=True, metrics=metrics, **settings), judge=judge,
                  embedder=HashEmbedder())
    return outcome, judge


def test_each_class_and_score_of_the_matrix() -> None:
    outcome, _ = run_oracle([ROW], DIAGNOSIS)
    (rec,) = outcome.records
    assert not rec.errors
    expected = {
        "claim_recall": 0.5,  # capital (ctx 1), Olympics (ctx 3) of 4
        "context_utilization": 0.5,  # the answer states the capital, not the Olympics
        "noise_sensitivity": 0.4,
        "noise_sensitivity.relevant": 0.2,  # the Seine: wrong, from ctx 1 (relevant)
        "noise_sensitivity.irrelevant": 0.2,  # three million: wrong, from ctx 2 only
        "hallucination": 0.2,  # the Louvre: wrong, in no context
        "self_knowledge": 0.2,  # Europe: right, in no context
    }
    # each also as .greedy; no .weighted: this judge gives no probabilities
    # (tests/test_diagnosis_weighted.py)
    assert rec.scores == pytest.approx(expected | {k + ".greedy": v for k, v in expected.items()})
    claims = rec.details["noise_sensitivity"]["answer_claims"]
    assert [c["class"] for c in claims] == ["supported", "noise_irrelevant", "hallucination",
                                           "self_knowledge", "noise_relevant"]
    assert [c["contexts"] for c in claims] == [[1], [2], [], [], [1]]
    assert [c["correct"] for c in claims] == [1, 0, 0, 1, 0]
    truth = rec.details["context_utilization"]["truth_claims"]
    assert [c["class"] for c in truth] == ["used", "not_retrieved", "not_retrieved", "unused"]
    assert [c["stated"] for c in truth] == [1, 0, 1, 0]
    alone = rec.details["claim_recall"]["truth_claims"]  # the answer is not read
    assert [c["class"] for c in alone] == ["retrieved", "not_retrieved", "not_retrieved",
                                           "retrieved"]
    assert rec.details["hallucination"]["relevant_contexts"] == [1, 3]


def test_with_the_metrics_it_reuses_only_the_per_chunk_requests_are_new() -> None:
    row = ROW | {"contexts": [" ".join(ROW["contexts"])]}  # one context: nothing is new
    base = ["faithfulness", "context_recall", "answer_correctness"]
    _, alone = run_oracle([row], base)
    _, both = run_oracle([row], base + DIAGNOSIS)
    assert len(both.requests) == len(alone.requests)
    assert {r.model_dump_json() for r in both.requests} == {
        r.model_dump_json() for r in alone.requests}
    _, three = run_oracle([ROW], base + DIAGNOSIS)  # 3 contexts: each claim side × each context
    _, base3 = run_oracle([ROW], base)
    assert len(three.requests) - len(base3.requests) == 2 * 3


def test_one_context_is_faithfulness_s_own_request() -> None:
    row = ROW | {"contexts": [" ".join(ROW["contexts"])]}
    _, faith = run_oracle([row], ["faithfulness"])
    _, diag = run_oracle([row], ["hallucination"])
    assert faith.requests[0].model_dump_json() in {r.model_dump_json() for r in diag.requests}


def test_the_same_bytes_whatever_else_is_in_the_run() -> None:
    other = ROW | {"id": "other", "answer": "Paris lies on the continent of Europe."}
    alone, _ = run_oracle([ROW], DIAGNOSIS)
    mixed, _ = run_oracle([other, ROW, other | {"id": "o2"}], DIAGNOSIS, parallel=3)
    rec = next(r for r in mixed.records if r.id == "paris")
    assert json.dumps(rec.scores, sort_keys=True) == json.dumps(alone.records[0].scores,
                                                                sort_keys=True)
    assert json.dumps(rec.details, sort_keys=True) == json.dumps(alone.records[0].details,
                                                                 sort_keys=True)


@pytest.mark.parametrize(("change", "key", "why"), [
    ({"ground_truth": "(1)"}, "claim_recall", "the ground truth makes no claim"),
    ({"contexts": ["", " "]}, "hallucination", "every context is empty"),
    ({"answer": "(1)"}, "noise_sensitivity", "the answer makes no claim"),
    ({"contexts": ["Lyon is a large city and nothing more."]}, "context_utilization",
     "no context entails a ground-truth claim"),
])
def test_each_undefined_case_is_a_reason_never_a_zero(change: dict, key: str, why: str) -> None:
    outcome, _ = run_oracle([ROW | change], DIAGNOSIS)
    (rec,) = outcome.records
    assert rec.scores.get(key) is None
    assert rec.details[key]["unscored_reason"] == why


def test_noise_of_an_absent_kind_of_context_is_undefined_with_its_reason() -> None:
    row = ROW | {"contexts": ["Lyon is a large city. Paris has three million people in total."]}
    outcome, _ = run_oracle([row], ["noise_sensitivity"])
    (rec,) = outcome.records
    assert rec.scores["noise_sensitivity.relevant"] is None
    assert rec.scores["noise_sensitivity.irrelevant"] == pytest.approx(0.2)
    assert rec.details["noise_sensitivity"]["undefined"] == {
        "noise_sensitivity.relevant": "no context entails a ground-truth claim"}
    every = ROW | {"contexts": ["Paris hosted the Summer Olympic Games in 1900."]}
    outcome, _ = run_oracle([every], ["noise_sensitivity"])
    (rec,) = outcome.records
    assert rec.scores["noise_sensitivity.irrelevant"] is None
    assert "no irrelevant one" in rec.details["noise_sensitivity"]["undefined"][
        "noise_sensitivity.irrelevant"]


def _row(other: int | None, *chunks: int) -> Row:
    return Row("s", 1, None if other is None else Verdict(other, "r"),
               tuple(Verdict(c, "r") for c in chunks))


def test_the_arithmetic_on_a_matrix_by_hand() -> None:
    # two contexts: the first entails ground-truth claim 1, the second none (irrelevant)
    m = ClaimMatrix(answer=(_row(0, 1, 1), _row(0, 0, 1), _row(1, 0, 0), _row(1, 1, 0)),
                    truth=(_row(1, 1, 0), _row(0, 0, 0)), n_chunks=2)
    assert m.relevant == (True, False)
    # a wrong claim both contexts entail is relevant noise (irrelevant noise is exclusive)
    assert [m.answer_class(r) for r in m.answer] == ["noise_relevant", "noise_irrelevant",
                                                    "self_knowledge", "supported"]
    d = diagnose(m)
    expected = {"claim_recall": 0.5, "context_utilization": 1.0,
                "noise_sensitivity": 0.5, "noise_sensitivity.relevant": 0.25,
                "noise_sensitivity.irrelevant": 0.25, "hallucination": 0.0,
                "self_knowledge": 0.25}
    assert d.scores == expected | {k + ".greedy": v for k, v in expected.items()}
    assert d.reasons == {}
    alone = diagnose(ClaimMatrix((), m.truth, 2, answer_side=False))
    assert alone.scores == {"claim_recall": 0.5, "claim_recall.greedy": 0.5}
    assert alone.reasons == {}


def test_the_estimate_counts_the_requests_exactly(tmp_path: Path) -> None:
    from localeval.estimate.sizing import estimate_run
    from tests.test_estimate import SchemaJudge

    answers = tmp_path / "answers.json"
    answers.write_text("[]", encoding="utf-8")
    rows = [ROW, ROW | {"id": "one", "contexts": ROW["contexts"][:1]},
            ROW | {"id": "q", "answer": "Is Paris the capital city of France? It is big."}]
    settings = Settings(judge="fake", fake_answers=answers, claims="sentences",
                        metrics=DIAGNOSIS, no_cache=True)
    estimate = estimate_run(rows, settings, parallel=1, calibrate_now=False)
    outcome = run(rows, None, settings, judge=SchemaJudge(), embedder=HashEmbedder())
    assert {s: v["requests"] for s, v in estimate["steps"].items()} == outcome.summary[
        "judge"]["calls_by_step"]
    assert estimate["total"]["count"] == "exact"


def _oracle_run(out: Path, rows: list[dict[str, Any]]) -> None:
    run(rows, out, Settings(no_cache=True, metrics=DIAGNOSIS), judge=OracleJudge(),
        embedder=HashEmbedder())


def test_the_report_diagnoses_the_run_and_marks_each_claim(tmp_path: Path) -> None:
    _oracle_run(tmp_path / "run", [ROW])
    md = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "## Diagnosis" in md
    assert "| ground truth | not_retrieved | in no context (retriever) | 2 | 0.500 | retriever |" \
        in md
    assert "| answer | hallucination | wrong, entailed by no context | 1 | 0.200 | generator |" \
        in md
    assert "| paris | 1 | The Louvre museum first opened in the year 1793. | hallucination |" in md
    html = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert 'class="chart diagnosis"' in html and "noise_irrelevant: 1 (20%)" in html


def test_the_report_diagnoses_a_conversation_turn_by_turn(tmp_path: Path) -> None:
    chat = {"id": "paris", "turns": [
        {"role": "user", "content": ROW["question"]},
        {"role": "assistant", "content": ROW["answer"], "contexts": ROW["contexts"],
         "ground_truth": ROW["ground_truth"]}]}
    _oracle_run(tmp_path / "run", [chat])
    md = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "| answer | hallucination | wrong, entailed by no context | 1 | 0.200 | generator |" \
        in md
    assert "| paris#turn2 | 1 | The Louvre museum first opened in the year 1793. |" in md


def test_a_run_whose_diagnosis_scored_nothing_says_so(tmp_path: Path) -> None:
    _oracle_run(tmp_path / "run", [{k: v for k, v in ROW.items() if k != "ground_truth"}])
    md = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "## Diagnosis\n\nNo sample of this run has classed claims" in md
    assert "| ground truth | used |" not in md


def test_a_report_of_another_run_has_no_diagnosis(tmp_path: Path) -> None:
    run([ROW], tmp_path / "run", Settings(no_cache=True, metrics=["faithfulness"]),
        judge=OracleJudge(), embedder=HashEmbedder())
    assert "Diagnosis" not in (tmp_path / "run" / "report.md").read_text(encoding="utf-8")


def test_the_report_names_the_diagnosis_group() -> None:
    from localeval.metrics.base import GROUPS
    from localeval.names import DIAGNOSIS_METRICS
    from localeval.report.diagnosis import TRUTH_OWNERS

    assert GROUPS["diagnosis"] == DIAGNOSIS_METRICS
    assert set(TRUTH_OWNERS) == set(DIAGNOSIS_METRICS)


def test_compare_shows_the_diagnosis_moving(tmp_path: Path) -> None:
    from localeval.report.compare import compare_runs, to_markdown

    fixed = ROW | {"answer": "Paris is the capital city of France. Paris hosted the Summer "
                             "Olympic Games in 1900."}
    _oracle_run(tmp_path / "a", [ROW])
    _oracle_run(tmp_path / "b", [fixed])
    c = compare_runs(tmp_path / "a", tmp_path / "b")
    by_key = {r.key: r for r in c.rows}
    assert by_key["hallucination"].diff == pytest.approx(-0.2)
    assert by_key["hallucination"].higher_is_better is False
    assert by_key["context_utilization"].diff == pytest.approx(0.5)
    assert by_key["noise_sensitivity.relevant"].diff == pytest.approx(-0.2)
    assert "hallucination" in to_markdown(c)


def test_labels_correct_a_diagnosis_mean_as_any_other(tmp_path: Path) -> None:
    from localeval.labels.estimate import estimate_run
    from tests.test_labels_estimate import write_labels

    rows = [ROW | {"id": f"r{i}", "answer": ROW["answer"] if i % 2 else
                   "Paris is the capital city of France."} for i in range(8)]
    _oracle_run(tmp_path / "run", rows)
    labels = [{"id": f"r{i}", "metric": key, "label": (0.2 if i % 2 else 0.0) + (i % 4 == 1) * .2,
               "order": "random"} for i in range(8) for key in ("hallucination",
                                                               "noise_sensitivity.relevant")]
    write_labels(tmp_path / "run" / "labels.jsonl", labels)
    est = estimate_run(tmp_path / "run")
    assert set(est.estimates) == {"hallucination", "noise_sensitivity.relevant"}
    assert est.estimates["hallucination"].n_labels == 8
    assert est.not_estimated == {}


def test_a_sample_without_context_asks_nothing_and_classes_no_claim() -> None:
    outcome, judge = run_oracle([ROW | {"contexts": ["", " "]}], DIAGNOSIS)
    (rec,) = outcome.records
    assert not rec.errors and not judge.requests
    assert all(v is None for v in rec.scores.values()) and len(rec.scores) == 7
    for name in DIAGNOSIS:
        d = rec.details[name]
        assert d["unscored_reason"] == "every context is empty"
        assert "answer_claims" not in d and "truth_claims" not in d
    assert rec.details["noise_sensitivity"]["undefined"] == {
        "noise_sensitivity.relevant": "every context is empty",
        "noise_sensitivity.irrelevant": "every context is empty"}


def test_empty_contexts_beside_others_are_skipped_and_numbered_as_the_sample_numbers_them() -> None:
    spaced = ROW | {"contexts": ["", ROW["contexts"][0], " ", ROW["contexts"][1],
                                 ROW["contexts"][2]]}
    outcome, _ = run_oracle([spaced], DIAGNOSIS)
    plain, _ = run_oracle([ROW], DIAGNOSIS)
    (rec,), (ref,) = outcome.records, plain.records
    assert rec.scores == ref.scores  # an empty context is neither relevant nor irrelevant
    claims = rec.details["noise_sensitivity"]["answer_claims"]
    assert [c["contexts"] for c in claims] == [[2], [4], [], [], [2]]
    assert rec.details["hallucination"]["relevant_contexts"] == [2, 5]
    truth = rec.details["context_utilization"]["truth_claims"]
    assert [c["contexts"] for c in truth] == [[2], [], [], [5]]


def test_the_report_leaves_out_a_sample_without_context_and_says_why(tmp_path: Path) -> None:
    _oracle_run(tmp_path / "run", [ROW, ROW | {"id": "bare", "contexts": [""]}])
    md = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "| ground truth | not_retrieved | in no context (retriever) | 2 | 0.500 | retriever |" \
        in md  # the sample with contexts alone: its 2 of 4
    assert "| answer | hallucination | wrong, entailed by no context | 1 | 0.200 | generator |" \
        in md
    assert "1 sample left out (no claim counted): every context is empty (1)." in md
    assert "| bare |" not in md
    html = (tmp_path / "run" / "report.html").read_text(encoding="utf-8")
    assert "1 sample left out (no claim counted): every context is empty (1)." in html
    _oracle_run(tmp_path / "bare", [ROW | {"id": "bare", "contexts": [""]}])
    md = (tmp_path / "bare" / "report.md").read_text(encoding="utf-8")
    assert "No sample of this run has classed claims" in md
    assert "1 sample left out (no claim counted): every context is empty (1)." in md


def test_a_conversation_turn_without_context_is_left_out_once(tmp_path: Path) -> None:
    def chat(id_: str, contexts: list[str]) -> dict[str, Any]:
        return {"id": id_, "turns": [
            {"role": "user", "content": ROW["question"]},
            {"role": "assistant", "content": ROW["answer"], "contexts": contexts,
             "ground_truth": ROW["ground_truth"]}]}

    _oracle_run(tmp_path / "run", [chat("paris", ROW["contexts"]), chat("bare", [" "]),
                                   ROW | {"id": "row", "contexts": [""]}])
    md = (tmp_path / "run" / "report.md").read_text(encoding="utf-8")
    assert "2 samples left out (no claim counted): every context is empty (2)." in md
    assert "| answer | hallucination | wrong, entailed by no context | 1 | 0.200 | generator |" \
        in md


def test_the_report_leaves_out_a_sample_whose_ground_truth_makes_no_claim() -> None:
    """Its answer claims are wrong against nothing: counted, they read as the generator's
    errors (every one `hallucination` or noise)."""
    from localeval.report.diagnosis import RunDiagnosis

    claims = [{"claim": "Paris is in France.", "class": "hallucination"}]
    run = RunDiagnosis()
    run.add("a", 1, {"hallucination": {"answer_claims": claims, "truth_claims": []}})
    run.add("b", 2, {"hallucination": {"answer_claims": claims,
                                       "truth_claims": [{"claim": "x", "class": "used"}]}})
    assert run.n_samples == 1 and run.answer["hallucination"] == 1
    assert run.left_out == {"the ground truth makes no claim": 1}
