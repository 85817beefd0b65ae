"""context_recall(C, g): the ground truth's claims (sentence by sentence), each judged
attributable to C or not, the same flow as faithfulness (claims/score.claims_supported).

score = attributable / claims (also as `.greedy`); `.weighted` = the mean P(attributable), as
faithfulness.weighted.
A ground truth without a sentence (or asserting nothing) → unscored. Contexts too long for the
window are split; each claim is judged against the piece most likely to hold its evidence.
"""

from __future__ import annotations

from localeval.data.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.claims.score import claims_supported

NAME = "context_recall"


@metric(NAME, requires=("contexts", "ground_truth"),
        order=50,
        steps=("faithfulness_statements", "context_recall_verdicts"),
        examples={"context_recall_verdicts": lambda ex: {"contexts": ex.contexts,
                                                         "statements": ex.statements}},
        verdict_keys=("verdict",),
        description="share of the ground truth's statements that the contexts support")
async def context_recall(sample: Sample, ctx: MetricContext) -> MetricResult:
    return await claims_supported(ctx, NAME, "context_recall_verdicts", sample.ground_truth or "",
                                  sample.question, sample.contexts, whose="the ground truth")
