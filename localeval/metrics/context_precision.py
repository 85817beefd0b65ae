"""context_precision(q, C, g): per context, was it useful for reaching the ground truth?

- context_precision = useful / k;
- context_precision.average_precision = Σ_k precision@k · v_k / Σ_k v_k (rank-aware; 0 when no
  context is useful, as average precision is when nothing relevant was retrieved).

One judge request per context, a bare verdict: "useful" is the judge's P(useful) against τ
(metrics/claims/verdicts.threshold); `.soft` is the mean P(useful). A context too long for the
window is split (metrics/claims/evidence.py) and counts as useful if any piece is.
"""

from __future__ import annotations

from typing import Any

from localeval.data.dataset import Sample
from localeval.judge.interface import FieldProbs
from localeval.judge.schemas import BareVerdict
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.claims.checks import decide
from localeval.metrics.claims.evidence import ask_pieces
from localeval.metrics.claims.score import mean_p
from localeval.metrics.claims.verdicts import p_yes, threshold

NAME = "context_precision"


def average_precision(useful: list[int]) -> float:
    """Σ precision@k · v_k / Σ v_k over ranks k (1-based); 0.0 when nothing is useful."""
    hits, total = 0, 0.0
    for k, v in enumerate(useful, start=1):
        if v:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


@metric(NAME, requires=("question", "contexts", "ground_truth"),
        order=40,
        steps=("context_precision_useful",),
        examples={"context_precision_useful": lambda ex: {
            "question": ex.question, "ground_truth": ex.answer, "context": ex.contexts[:1]}},
        verdict_keys=("verdict",),
        description="share of the contexts useful for reaching the ground truth, and its "
                    "rank-aware average precision")
async def context_precision(sample: Sample, ctx: MetricContext) -> MetricResult:
    per_context = []
    for context in sample.contexts or []:
        if not context.strip():
            per_context.append({"verdict": 0, "reason": "empty context"})
            continue
        answers = await ask_pieces(ctx, "context_precision_useful", BareVerdict,
                                   split="context", probe=["verdict"], question=sample.question,
                                   ground_truth=sample.ground_truth, context=[context])
        decided = [_decide(sample, a.answer.model_dump(), a.piece.texts, a.probs, ctx)
                   for a in answers]
        entry = max(decided, key=lambda d: (d["verdict"], d.get("p_useful", 0.0)))
        if len(answers) > 1:
            entry["pieces"] = len(answers)
        per_context.append(entry)
    if not per_context:
        return MetricResult.unscored(NAME, "no contexts")
    useful = [v["verdict"] for v in per_context]
    scores = {NAME: sum(useful) / len(useful),
              f"{NAME}.average_precision": average_precision(useful)}
    soft = mean_p(per_context, "p_useful")
    if soft is not None:
        scores[f"{NAME}.soft"] = soft
    return MetricResult(scores=scores, details={"contexts": per_context})


def _decide(sample: Sample, judged: dict[str, Any], texts: list[str], probs: list[FieldProbs],
            ctx: MetricContext) -> dict[str, Any]:
    """One piece's verdict: the judge's P(useful) against τ."""
    p = p_yes(probs[0]) if probs else None
    if p is not None:
        judged = {**judged, "verdict": int(p >= threshold(ctx))}
    entry = decide(sample.ground_truth or "", judged, texts, sample.question,
                   material_name="document", details=False)
    if p is not None:
        entry["p_useful"] = 0.0 if entry["judge_verdict"] > entry["verdict"] else round(p, 4)
    return entry
