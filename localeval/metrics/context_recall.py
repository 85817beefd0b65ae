"""context_recall(C, g): split the ground truth into statements; judge each attributable to C.

score = attributable / statements. No statements in g → unscored. Contexts too long for the
window are split; a statement is attributable if any piece supports it.
"""

from __future__ import annotations

from localeval.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.chunking import support_verdicts
from localeval.metrics.faithfulness import nonempty, statements_of

NAME = "context_recall"


@metric(NAME, requires=("contexts", "ground_truth"),
        steps=("faithfulness_statements", "context_recall_verdicts"),
        description="share of the ground truth's statements that the contexts support")
async def context_recall(sample: Sample, ctx: MetricContext) -> MetricResult:
    contexts = nonempty(sample.contexts)
    if not contexts:
        return MetricResult.unscored(NAME, "every context is empty")
    statements = await statements_of(ctx, sample.ground_truth or "", sample.question)
    if not statements:
        return MetricResult.unscored(NAME, "the judge found no statements in the ground truth",
                                     statements=[])
    support = await support_verdicts(ctx, "context_recall_verdicts", statements,
                                     split="contexts", contexts=contexts)
    details = {"statements": [{"statement": s, **v}
                              for s, v in zip(statements, support.verdicts, strict=True)]}
    if support.pieces > 1:
        details["context_pieces"] = support.pieces
    return MetricResult(scores={NAME: support.supported / len(statements)}, details=details)
