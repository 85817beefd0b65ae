"""The diagnosis metrics' probability-weighted scores (`KEY.weighted`, metrics/claims/matrix.py
`_weighted`): each verdict's P(verdict = 1) in place of its 0/1, the verdicts independent, so
each class's count is its expected count. Exact values on hand-made matrices and on a run of a
judge with fixed probabilities; no judge request more; `.greedy` beside each; nothing where the
score is undefined or the judge gives no probability; behind the shield; in summary.json, the
report and compare."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localeval.config import Settings
from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest
from localeval.metrics.claims.matrix import ClaimMatrix, Row, diagnose
from localeval.metrics.claims.record import Verdict
from localeval.models.embed import HashEmbedder
from localeval.runner import run
from tests.fooled import NOTE
from tests.test_diagnosis import DIAGNOSIS, ROW, OracleJudge

BASE = ("claim_recall", "context_utilization", "noise_sensitivity", "noise_sensitivity.relevant",
        "noise_sensitivity.irrelevant", "hallucination", "self_knowledge")


def _v(p: float, tau: float = 0.5) -> Verdict:
    return Verdict(int(p >= tau), "r", p_yes=p)


def _row(other: float | None, *chunks: float) -> Row:
    return Row("s", 1, None if other is None else _v(other), tuple(_v(p) for p in chunks))


# Two contexts. Ground-truth claims (P stated; P entailed by context 1, 2):
#   t1 (0.9; 0.8, 0.1), t2 (0.2; 0.3, 0.0)  → greedy: t1 used, t2 not retrieved
#   e1 = 1 − 0.2·0.9 = 0.82, e2 = 1 − 0.7·1 = 0.3
#   r1 = 1 − 0.2·0.7 = 0.86 (context 1 relevant), r2 = 1 − 0.9·1 = 0.1
# Answer claims (P correct; P entailed by context 1, 2), E = P(in a context), R = P(in a relevant):
#   a1 (0.1; 0.7, 0.6)  E 0.88, R 1 − (1 − 0.602)(1 − 0.06) = 0.62588   greedy noise_relevant
#   a2 (0.2; 0.2, 0.9)  E 0.92, R 1 − 0.828·0.91 = 0.24652             greedy noise_irrelevant
#   a3 (0.8; 0.1, 0.2)  E 0.28, R 1 − 0.914·0.98 = 0.10428             greedy self_knowledge
#   a4 (0.7; 0.95, 0.0) E 0.95, R 0.817                                greedy supported
HAND = ClaimMatrix(answer=(_row(0.1, 0.7, 0.6), _row(0.2, 0.2, 0.9), _row(0.8, 0.1, 0.2),
                           _row(0.7, 0.95, 0.0)),
                   truth=(_row(0.9, 0.8, 0.1), _row(0.2, 0.3, 0.0)), n_chunks=2)


def test_the_weighted_scores_of_a_hand_made_matrix() -> None:
    d = diagnose(HAND)
    assert [HAND.answer_class(r) for r in HAND.answer] == [
        "noise_relevant", "noise_irrelevant", "self_knowledge", "supported"]
    assert {k: d.scores[k] for k in BASE} == {
        "claim_recall": 0.5, "context_utilization": 1.0, "noise_sensitivity": 0.5,
        "noise_sensitivity.relevant": 0.25, "noise_sensitivity.irrelevant": 0.25,
        "hallucination": 0.0, "self_knowledge": 0.25}
    weighted = {k[: -len(".weighted")]: v for k, v in d.scores.items() if k.endswith(".weighted")}
    assert weighted == pytest.approx({
        "claim_recall": (0.82 + 0.3) / 2,  # 0.56
        "context_utilization": (0.82 * 0.9 + 0.3 * 0.2) / (0.82 + 0.3),  # 0.7125
        # (1 − c)·E: 0.792 + 0.736 + 0.056 + 0.285
        "noise_sensitivity": 1.869 / 4,
        # (1 − c)·R: 0.563292 + 0.197216 + 0.020856 + 0.2451
        "noise_sensitivity.relevant": 1.026464 / 4,
        # (1 − c)·(E − R): 0.228708 + 0.538784 + 0.035144 + 0.0399
        "noise_sensitivity.irrelevant": 0.842536 / 4,
        # (1 − c)·(1 − E): 0.108 + 0.064 + 0.144 + 0.015
        "hallucination": 0.331 / 4,
        # c·(1 − E): 0.012 + 0.016 + 0.576 + 0.035
        "self_knowledge": 0.639 / 4,
    }, abs=1e-12)
    assert {k: d.scores[k + ".greedy"] for k in BASE} == {k: d.scores[k] for k in BASE}
    # claim_recall alone (the answer not read): the same truth side
    alone = diagnose(ClaimMatrix((), HAND.truth, 2, answer_side=False))
    assert alone.scores == pytest.approx({"claim_recall": 0.5, "claim_recall.greedy": 0.5,
                                          "claim_recall.weighted": 0.56})


def test_verdicts_of_certainty_give_the_greedy_figures() -> None:
    """P 0 or 1 everywhere: the expected counts are the counts."""
    certain = ClaimMatrix(answer=(_row(0, 1, 1), _row(0, 0, 1), _row(1, 0, 0), _row(1, 1, 0)),
                          truth=(_row(1, 1, 0), _row(0, 0, 0)), n_chunks=2)
    d = diagnose(certain)
    for key in BASE:
        assert d.scores[key + ".weighted"] == pytest.approx(d.scores[key]), key


def test_an_undefined_score_has_no_greedy_or_weighted_twin() -> None:
    # no context entails a ground-truth claim: context_utilization and .relevant undefined
    m = ClaimMatrix(answer=(_row(0.1, 0.3, 0.2),), truth=(_row(0.9, 0.4, 0.45),), n_chunks=2)
    d = diagnose(m)
    assert d.scores["context_utilization"] is None
    assert d.scores["noise_sensitivity.relevant"] is None
    for key in ("context_utilization", "noise_sensitivity.relevant"):
        assert key + ".greedy" not in d.scores and key + ".weighted" not in d.scores
    assert d.reasons["noise_sensitivity.relevant"] == "no context entails a ground-truth claim"
    # defined ones still have theirs: e = 1 − 0.6·0.55 = 0.67
    assert d.scores["claim_recall.weighted"] == pytest.approx(0.67)


def test_a_verdict_without_probability_leaves_out_the_weighted_scores_it_reads() -> None:
    no_p = Row("s", 1, Verdict(1, "r"), (Verdict(1, "r"), Verdict(0, "r")))
    m = ClaimMatrix(answer=(no_p,), truth=HAND.truth, n_chunks=2)
    d = diagnose(m)
    assert d.scores["claim_recall.weighted"] == pytest.approx(0.56)  # the truth side has P
    assert d.scores["context_utilization.weighted"] == pytest.approx(0.7125)
    assert not any(k.endswith(".weighted") for k in d.scores
                   if k.split(".")[0] in ("noise_sensitivity", "hallucination", "self_knowledge"))
    assert d.scores["hallucination.greedy"] == 0.0


class ProbingOracle(OracleJudge):
    """The oracle's verdicts with fixed probabilities: P(1) = 0.9 where it entails, 0.2 where
    not (so τ decides as the oracle does)."""

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        reply = await super().complete(request)
        if "verdict" in request.probe_fields:
            said = [v["verdict"] for v in json.loads(reply.text)["verdicts"]]
            reply.field_probs = [FieldProbs(field="verdict", probs={"1": 0.9, "0": 0.1} if v
                                            else {"1": 0.2, "0": 0.8}) for v in said]
        return reply


SMALL = {"id": "small", "question": "Tell me about Paris.",
         "answer": "Paris is the capital city of France. The river flows through the old town. "
                   "Paris lies on the continent of Europe. Paris has a famous opera house.",
         "ground_truth": "Paris is the capital city of France. Paris lies on the continent of "
                         "Europe.",
         "contexts": ["Paris is the capital city of France.",
                      "Lyon is a large city. The river flows through the old town."]}
"""P of each verdict as the run writes it (0.9 entailed, 0.2 not, 0.0 where the check finds a
name the material lacks: France, Europe or Paris against context 2, Europe against context 1):
  truth  capital (stated 0.9; 0.9, 0.0), Europe (0.9; 0.0, 0.0): e = 0.9, 0; r = 0.9, 0
  answer capital (correct 0.9; 0.9, 0.0)  river (0.2; 0.2, 0.9)
         Europe (0.9; 0.0, 0.0)           opera (0.2; 0.2, 0.2)"""

SMALL_WEIGHTED = {
    "claim_recall.weighted": 0.45,  # (0.9 + 0) / 2
    "context_utilization.weighted": 0.9,  # 0.9·0.9 / 0.9
    "noise_sensitivity.weighted": (0.09 + 0.736 + 0 + 0.288) / 4,  # 0.2785
    "noise_sensitivity.relevant.weighted": (0.081 + 0.144 + 0 + 0.144) / 4,  # 0.09225
    "noise_sensitivity.irrelevant.weighted": (0.009 + 0.592 + 0 + 0.144) / 4,  # 0.18625
    "hallucination.weighted": (0.01 + 0.064 + 0.1 + 0.512) / 4,  # 0.1715
    "self_knowledge.weighted": (0.09 + 0.016 + 0.9 + 0.128) / 4,  # 0.2835
}
SMALL_GREEDY = {"claim_recall": 0.5, "context_utilization": 1.0, "noise_sensitivity": 0.25,
                "noise_sensitivity.relevant": 0.0, "noise_sensitivity.irrelevant": 0.25,
                "hallucination": 0.25, "self_knowledge": 0.25}


def _run(rows: list[dict[str, Any]], judge: Any, out: Path | None = None,
         metrics: list[str] = DIAGNOSIS) -> Any:
    outcome = run(rows, out, Settings(no_cache=True, metrics=metrics), judge=judge,
                  embedder=HashEmbedder())
    for rec in outcome.records:
        assert not rec.errors, rec.errors
    return outcome


def test_a_run_of_a_judge_with_fixed_probabilities_scores_each_weighted_key_exactly() -> None:
    judge = ProbingOracle()
    (rec,) = _run([SMALL], judge).records
    answer = rec.details["noise_sensitivity"]["answer_claims"]
    assert [c["class"] for c in answer] == ["supported", "noise_irrelevant", "self_knowledge",
                                           "hallucination"]
    assert rec.scores == pytest.approx(SMALL_WEIGHTED | SMALL_GREEDY | {
        k + ".greedy": v for k, v in SMALL_GREEDY.items()}, abs=1e-12)
    # the keys of one metric: the score, its .greedy, its .weighted
    assert list(rec.scores)[:3] == ["claim_recall", "claim_recall.greedy",
                                    "claim_recall.weighted"]


def test_the_weighted_scores_ask_nothing_more() -> None:
    """The same requests, byte for byte, with and without probabilities; their count is the one
    the code before the weighted scores made (8 on ROW's three contexts, 10 beside
    faithfulness, context_recall and answer_correctness)."""
    base = ["faithfulness", "context_recall", "answer_correctness"]
    for metrics, count in ((DIAGNOSIS, 8), (base + DIAGNOSIS, 10)):
        probing, plain = ProbingOracle(), OracleJudge()
        (rec,) = _run([ROW], probing, metrics=metrics).records
        _run([ROW], plain, metrics=metrics)
        assert "hallucination.weighted" in rec.scores
        assert len(probing.requests) == len(plain.requests) == count
        assert [r.model_dump_json() for r in probing.requests] == [
            r.model_dump_json() for r in plain.requests]


def test_a_judge_without_probabilities_writes_no_weighted_key() -> None:
    (rec,) = _run([SMALL], OracleJudge()).records
    assert not [k for k in rec.scores if k.endswith(".weighted")]
    assert rec.scores == SMALL_GREEDY | {k + ".greedy": v for k, v in SMALL_GREEDY.items()}


class FooledProbing(ProbingOracle):
    """Entails everything, sure of it (P 0.95), where the prompt holds the planted note."""

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        reply = await super().complete(request)
        if not any(NOTE in m["content"] for m in request.messages):
            return reply
        said = [{**v, "verdict": 1} for v in json.loads(reply.text)["verdicts"]]
        reply.text = json.dumps({"verdicts": said})
        if "verdict" in request.probe_fields:
            reply.field_probs = [FieldProbs(field="verdict", probs={"1": 0.95, "0": 0.05})
                                 for _ in said]
        return reply


def test_the_shield_takes_the_worse_of_each_weighted_score() -> None:
    """A note opening context 2 fools the judge into entailing everything by it (names the
    checks would miss are in it); each weighted score is the worse of the note's and the
    copy's: the copy's where higher is better (claim_recall.weighted) or no direction
    (self_knowledge), never better for the system where lower is (noise)."""
    words = "Paris, France and Europe are words here."
    clean = SMALL | {"id": "clean", "contexts": [SMALL["contexts"][0], words]}
    planted = clean | {"id": "planted", "contexts": [SMALL["contexts"][0], NOTE + " " + words]}
    unshielded = _run([clean | {"id": "fooled", "contexts": [SMALL["contexts"][0],
                                                              "FOOLED " + words]}],
                      _NoteWord())
    c, p = _run([clean, planted], FooledProbing()).records
    (u,) = unshielded.records
    assert u.scores["claim_recall.weighted"] > c.scores["claim_recall.weighted"]  # fooled up
    assert u.scores["noise_sensitivity.weighted"] > c.scores["noise_sensitivity.weighted"]
    moved = p.details["claim_recall"]["instructions"]["scored_without_them"]
    assert "claim_recall.weighted" in moved
    assert p.scores["claim_recall.weighted"] == c.scores["claim_recall.weighted"]
    assert p.scores["self_knowledge.weighted"] == c.scores["self_knowledge.weighted"]
    assert p.scores["noise_sensitivity.weighted"] == u.scores["noise_sensitivity.weighted"]
    for key, value in c.scores.items():  # a lower-better key the note left undefined stays so
        lower_better = key.split(".")[0] in ("noise_sensitivity", "hallucination")
        got = p.scores.get(key)
        assert got == value or (lower_better and (got is None or got > value)), key


class _NoteWord(FooledProbing):
    """FooledProbing with the word FOOLED in the place of the note: the judge fooled, the
    shield not woken (what the scores would be without it)."""

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        if any("FOOLED" in m["content"] for m in request.messages):
            request = request.model_copy(update={"messages": [
                m | {"content": m["content"].replace("FOOLED", NOTE)}
                for m in request.messages]})
        return await super().complete(request)


def test_summary_report_and_compare_read_the_weighted_scores(tmp_path: Path) -> None:
    from localeval.report.compare import compare_runs, to_markdown

    fixed = SMALL | {"answer": "Paris is the capital city of France."}
    _run([SMALL], ProbingOracle(), tmp_path / "a")
    _run([fixed], ProbingOracle(), tmp_path / "b")
    summary = json.loads((tmp_path / "a" / "summary.json").read_text(encoding="utf-8"))
    for key, value in SMALL_WEIGHTED.items():
        assert summary["metrics"][key]["mean"] == pytest.approx(value), key
    md = (tmp_path / "a" / "report.md").read_text(encoding="utf-8")
    assert "hallucination.weighted" in md and "noise_sensitivity.relevant.weighted" in md
    c = compare_runs(tmp_path / "a", tmp_path / "b")
    by_key = {r.key: r for r in c.rows}
    # b: the one claim, correct 0.9 and in context 1 with 0.9: hallucination (1 − 0.9)·0.1
    assert by_key["hallucination.weighted"].diff == pytest.approx(0.01 - 0.1715)
    assert by_key["hallucination.weighted"].higher_is_better is False
    assert by_key["claim_recall.weighted"].diff == pytest.approx(0.0)
    assert "hallucination.weighted" in to_markdown(c)
