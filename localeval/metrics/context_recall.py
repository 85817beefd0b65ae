"""context_recall(C, g): the ground truth's statements (sentence by sentence), each judged
attributable to C or not, with the same checks as faithfulness (metrics/support/claims.py: a question
claims nothing, a sentence quoted from C is attributable without a request).

score = attributable / statements; `.soft` = the mean P(attributable), as faithfulness.soft.
A ground truth without a sentence (or of questions only) → unscored. Contexts too long for the
window are split; each statement is judged against the piece most likely to hold its evidence.
"""

from __future__ import annotations

from localeval.data.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.faithfulness import nonempty
from localeval.metrics.support.claims import judge_claims

NAME = "context_recall"


@metric(NAME, requires=("contexts", "ground_truth"),
        steps=("faithfulness_statements", "context_recall_verdicts", "support_choice"),
        examples={"context_recall_verdicts": lambda ex: {"contexts": ex.contexts,
                                                         "statements": ex.statements}},
        verdict_keys=("verdict",),
        description="share of the ground truth's statements that the contexts support")
async def context_recall(sample: Sample, ctx: MetricContext) -> MetricResult:
    contexts = nonempty(sample.contexts)
    if not contexts:
        return MetricResult.unscored(NAME, "every context is empty")
    claims = await judge_claims(ctx, "context_recall_verdicts", sample.ground_truth or "",
                                sample.question, contexts)
    if not claims.sentences:
        return MetricResult.unscored(NAME, "the ground truth has no sentence", statements=[])
    if not claims.statements:
        return MetricResult.unscored(NAME, "the ground truth makes no claim: every sentence "
                                     "is a question", **claims.details())
    scores = {NAME: claims.supported / len(claims.statements)}
    if claims.p_supported is not None:  # as faithfulness.soft: the judge's own confidence
        scores[f"{NAME}.soft"] = claims.p_supported / len(claims.statements)
    return MetricResult(scores=scores, details=claims.details())
