"""context_recall(C, g): the ground truth's statements (sentence by sentence), each judged
attributable to C or not, with the same evidence check as faithfulness.

score = attributable / statements. A ground truth without a sentence → unscored. Contexts too
long for the window are split; each statement is judged against the piece most likely to hold
its evidence.
"""

from __future__ import annotations

from localeval.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.chunking import support_verdicts
from localeval.metrics.faithfulness import nonempty, statement_details, statements_of

NAME = "context_recall"


@metric(NAME, requires=("contexts", "ground_truth"),
        steps=("faithfulness_statements", "context_recall_verdicts"),
        description="share of the ground truth's statements that the contexts support")
async def context_recall(sample: Sample, ctx: MetricContext) -> MetricResult:
    contexts = nonempty(sample.contexts)
    if not contexts:
        return MetricResult.unscored(NAME, "every context is empty")
    found = await statements_of(ctx, sample.ground_truth or "", sample.question)
    if not found.items:
        return MetricResult.unscored(NAME, "the ground truth has no sentence", statements=[])
    support = await support_verdicts(ctx, "context_recall_verdicts", found.texts,
                                     split="contexts", contexts=contexts,
                                     question=sample.question)
    return MetricResult(scores={NAME: support.supported / len(found.items)},
                        details=statement_details(found, support))
