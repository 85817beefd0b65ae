"""answer_correctness(a, g): statements of the answer and of the ground truth, then

- TP: answer statements the ground truth supports; FP: answer statements it does not;
- FN: ground-truth statements the answer does not cover;
- answer_correctness = TP / (TP + 0.5 · (FP + FN)), blended with answer_similarity when
  settings.correctness_weights = (factual, similarity) gives similarity a weight (default (1, 0):
  facts only, since embedding cosines of related texts sit high and compress the range);
- answer_correctness.precision = TP / (TP + FP), .recall = TP / (TP + FN), .f1, .factual;
  `.greedy` the factual score (= `.factual`), `.weighted` the factual score with P(supported) in
  place of each verdict.

No claims on either side → unscored. The claims of each side are its sentences (or, with
`--claims statements`, the shared faithfulness_statements step, so an answer is split once per
sample for every metric); each verdict is P(supported) against τ.
"""

from __future__ import annotations

from typing import Any

from localeval.data.dataset import Sample
from localeval.errors import ConfigError
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.claims.record import ClaimRecord, Verdict
from localeval.metrics.claims.score import claims_of, each_against_other
from localeval.names import GREEDY, WEIGHTED

NAME = "answer_correctness"


def correctness_scores(tp: int, fp: int, fn: int) -> dict[str, float | None]:
    """The factual score, precision, recall and F1 (None where the ratio is 0/0)."""
    denom = tp + 0.5 * (fp + fn)
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    if precision is None or recall is None:
        f1 = None
    else:
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"factual": tp / denom if denom else None, "precision": precision, "recall": recall,
            "f1": f1}


def _weighted(a_verdicts: list[Verdict], g_verdicts: list[Verdict]) -> float | None:
    """The factual score with each verdict replaced by the judge's P(supported): TP = Σ p over
    the answer's claims, FP = Σ (1 − p), FN = Σ (1 − p) over the ground truth's."""
    pa = [v.p_yes for v in a_verdicts]
    pg = [v.p_yes for v in g_verdicts]
    if any(p is None for p in pa + pg) or not pa + pg:
        return None
    tp = sum(pa)  # type: ignore[arg-type]
    denom = tp + 0.5 * (len(pa) - tp + len(pg) - sum(pg))  # type: ignore[arg-type]
    return tp / denom if denom else None


@metric(NAME, requires=("answer", "ground_truth"),
        embedder=lambda settings: settings.correctness_weights[1] > 0,
        order=70,
        steps=("faithfulness_statements", "answer_correctness_answer",
               "answer_correctness_reference"),
        examples={
            "answer_correctness_answer": lambda ex: {
                "question": ex.question, "reference": [ex.answer], "statements": ex.statements},
            "answer_correctness_reference": lambda ex: {
                "question": ex.question, "answer": [ex.answer], "statements": ex.statements}},
        verdict_keys=("verdict",),
        description="TP/(TP+0.5(FP+FN)) over the answer's and the ground truth's statements, "
                    "plus precision, recall, F1 (optionally blended with answer_similarity)")
async def answer_correctness(sample: Sample, ctx: MetricContext) -> MetricResult:
    answer, truth = sample.answer or "", sample.ground_truth or ""
    a_found = await claims_of(ctx, answer, sample.question)
    g_found = await claims_of(ctx, truth, sample.question)
    a_statements, g_statements = a_found.texts, g_found.texts
    if not a_statements and not g_statements:
        return MetricResult.unscored(NAME, "neither the answer nor the ground truth has a "
                                     "sentence")
    a_support, g_support = await each_against_other(ctx, sample, a_statements, g_statements)
    a_verdicts, g_verdicts = a_support.verdicts, g_support.verdicts
    tp = sum(v.verdict for v in a_verdicts)
    fp = len(a_verdicts) - tp
    fn = sum(1 - v.verdict for v in g_verdicts)
    parts = correctness_scores(tp, fp, fn)
    factual = parts["factual"]
    w_fact, w_sim = ctx.settings.correctness_weights
    if w_fact < 0 or w_sim < 0 or w_fact + w_sim <= 0:
        raise ConfigError("correctness_weights must be two non-negative numbers, not both 0")
    details: dict[str, Any] = {
        "tp": [s for s, v in zip(a_statements, a_verdicts, strict=True) if v.verdict],
        "fp": [s for s, v in zip(a_statements, a_verdicts, strict=True) if not v.verdict],
        "fn": [s for s, v in zip(g_statements, g_verdicts, strict=True) if not v.verdict],
        "answer_statements": [ClaimRecord(a.statement, a.sentence, v).as_json()
                              for a, v in zip(a_found.items, a_verdicts, strict=True)],
        "ground_truth_statements": [ClaimRecord(a.statement, a.sentence, v).as_json()
                                    for a, v in zip(g_found.items, g_verdicts, strict=True)],
        "weights": [w_fact, w_sim],
    }
    retries = a_found.retries + g_found.retries + a_support.retries + g_support.retries
    if retries:
        details["judge_retries"] = retries
    score = factual
    if w_sim > 0 and factual is not None:
        similarity = max(0.0, await ctx.cosine(answer, truth))
        details["similarity"] = similarity
        score = (w_fact * factual + w_sim * similarity) / (w_fact + w_sim)
    scores = {NAME: score, **{f"{NAME}.{k}": v for k, v in parts.items()}}
    scores[NAME + GREEDY] = factual
    weighted = _weighted(a_verdicts, g_verdicts)
    if weighted is not None:
        scores[NAME + WEIGHTED] = weighted
    return MetricResult(scores=scores, details=details,
                        reason=None if score is not None else "no statements to compare")
