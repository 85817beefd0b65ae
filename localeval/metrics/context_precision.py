"""context_precision(q, C, g): per context, was it useful for reaching the ground truth?

- context_precision = useful / k (also as `.greedy`);
- context_precision.average_precision = Σ_k precision@k · v_k / Σ_k v_k (rank-aware; 0 when no
  context is useful, as average precision is when nothing relevant was retrieved).

One judge request per context, a bare verdict: "useful" is the judge's P(useful) against the
step's own τ (metrics/claims/verdicts.FITTED_STEP); `.weighted` is the mean P(useful). A context
too long for the window is split (metrics/claims/evidence.py) and counts as useful if any piece
is.
"""

from __future__ import annotations

from dataclasses import replace

from localeval.data.dataset import Sample
from localeval.judge.interface import FieldProbs
from localeval.judge.schemas import BareVerdict
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.claims.checks import decide
from localeval.metrics.claims.evidence import ask_pieces
from localeval.metrics.claims.record import Verdict
from localeval.metrics.claims.score import mean_p
from localeval.metrics.claims.verdicts import p_yes, threshold
from localeval.names import GREEDY, WEIGHTED

NAME = "context_precision"
STEP = "context_precision_useful"


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
        steps=(STEP,),
        examples={STEP: lambda ex: {
            "question": ex.question, "ground_truth": ex.answer, "context": ex.contexts[:1]}},
        verdict_keys=("verdict",),
        description="share of the contexts useful for reaching the ground truth, and its "
                    "rank-aware average precision")
async def context_precision(sample: Sample, ctx: MetricContext) -> MetricResult:
    per_context: list[Verdict] = []
    pieces: list[int] = []  # per context: the pieces it was split into
    for context in sample.contexts or []:
        if not context.strip():
            per_context.append(Verdict(0, "empty context"))
            pieces.append(1)
            continue
        answers = await ask_pieces(ctx, STEP, BareVerdict,
                                   split="context", probe=["verdict"], question=sample.question,
                                   ground_truth=sample.ground_truth, context=[context])
        decided = [_decide(sample, int(a.answer.verdict),  # type: ignore[attr-defined]
                           a.piece.texts, a.probs, ctx) for a in answers]
        per_context.append(max(decided, key=lambda d: (d.verdict, d.p_yes or 0.0)))
        pieces.append(len(answers))
    if not per_context:
        return MetricResult.unscored(NAME, "no contexts")
    useful = [v.verdict for v in per_context]
    greedy = sum(useful) / len(useful)
    scores = {NAME: greedy, NAME + GREEDY: greedy,
              f"{NAME}.average_precision": average_precision(useful)}
    weighted = mean_p(per_context)
    if weighted is not None:
        scores[NAME + WEIGHTED] = weighted
    return MetricResult(scores=scores, details={"contexts": [
        {**v.as_json("p_useful"), **({"pieces": n} if n > 1 else {})}
        for v, n in zip(per_context, pieces, strict=True)]})


def _decide(sample: Sample, said: int, texts: list[str], probs: list[FieldProbs],
            ctx: MetricContext) -> Verdict:
    """One piece's verdict: the judge's P(useful) against τ."""
    p = p_yes(probs[0]) if probs else None
    if p is not None:
        said = int(p >= threshold(ctx, STEP))
    v = decide(sample.ground_truth or "", said, texts, sample.question,
               material_name="document", details=False)
    if p is None:
        return v
    return replace(v, p_yes=0.0 if v.overruled else round(p, 4))
