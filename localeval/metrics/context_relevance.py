"""context_relevance(a, C), both directions, on deterministic sentences (text.split_sentences),
each a support verdict (metrics/support/verdicts.py):

- answer_supported_precision: share of the answer's sentences that C supports (main score);
- context_supported_precision: share of the contexts' sentences that the answer supports;
- rank_weighted: each context's own context-supported precision, averaged with weights
  w_i = 1 / log2(i + 1) for the context at rank i (1, 0.63, 0.5, 0.43, …, as in DCG).

Sub-score keys: context_relevance.answer_supported_precision, .context_supported_precision,
.rank_weighted, and `.answer_supported_precision.soft` / `.context_supported_precision.soft`
(the mean P(supported) of each direction). The main key equals answer_supported_precision.
Each verdict is P(supported) against τ (metrics/support/threshold.py).
"""

from __future__ import annotations

import math
from typing import Any

from localeval.data.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.support.score import nonempty
from localeval.metrics.support.sentences import split
from localeval.metrics.support.verdicts import support_verdicts

NAME = "context_relevance"


def rank_weight(rank: int) -> float:
    """Weight of the context at 1-based `rank`: 1/log2(rank+1)."""
    return 1.0 / math.log2(rank + 1)


@metric(NAME, requires=("answer", "contexts"),
        order=30,
        steps=("context_relevance_answer", "context_relevance_context"),
        examples={
            "context_relevance_answer": lambda ex: {"contexts": ex.contexts,
                                                    "sentences": ex.statements},
            "context_relevance_context": lambda ex: {"answer": [ex.answer],
                                                     "sentences": ex.contexts}},
        verdict_keys=("verdict",),
        description="answer sentences supported by the contexts, and context sentences "
                    "supported by the answer (plus a rank-weighted per-context variant)")
async def context_relevance(sample: Sample, ctx: MetricContext) -> MetricResult:
    contexts = nonempty(sample.contexts)
    answer_sentences = list(split(sample.answer or "").items)
    per_context = [list(split(c).items) for c in contexts]
    context_sentences = [s for group in per_context for s in group]
    if not contexts:
        return MetricResult.unscored(NAME, "every context is empty")
    if not answer_sentences:
        return MetricResult.unscored(NAME, "the answer has no sentences")
    by_answer = await support_verdicts(ctx, "context_relevance_answer", answer_sentences,
                                       split="contexts", items_var="sentences",
                                       contexts=contexts, question=sample.question)
    by_context = await support_verdicts(ctx, "context_relevance_context", context_sentences,
                                        split="answer", items_var="sentences",
                                        answer=[sample.answer or ""], question=sample.question,
                                        material_name="answer", details=False)
    asp = by_answer.supported / len(answer_sentences)
    csp = by_context.supported / len(context_sentences) if context_sentences else None

    precisions: list[float | None] = []
    at = 0
    for group in per_context:
        verdicts = by_context.verdicts[at:at + len(group)]
        at += len(group)
        precisions.append(sum(v["verdict"] for v in verdicts) / len(group) if group else None)
    weighted = [(rank_weight(i), p) for i, p in enumerate(precisions, start=1) if p is not None]
    rank_weighted = (sum(w * p for w, p in weighted) / sum(w for w, _ in weighted)
                     if weighted else None)

    details: dict[str, Any] = {
        "answer_sentences": [{"sentence": s, **v}
                             for s, v in zip(answer_sentences, by_answer.verdicts, strict=True)],
        "context_sentences": [{"sentence": s, **v}
                              for s, v in zip(context_sentences, by_context.verdicts, strict=True)],
        "per_context_precision": precisions,
        "rank_weights": [round(rank_weight(i), 4) for i in range(1, len(contexts) + 1)],
    }
    if by_answer.retries or by_context.retries:
        details["judge_retries"] = by_answer.retries + by_context.retries
    scores = {
        NAME: asp,
        f"{NAME}.answer_supported_precision": asp,
        f"{NAME}.context_supported_precision": csp,
        f"{NAME}.rank_weighted": rank_weighted,
    }
    for key, support in (("answer_supported_precision", by_answer),
                         ("context_supported_precision", by_context)):
        if support.soft is not None:  # the mean P(supported) of that direction
            scores[f"{NAME}.{key}.soft"] = support.soft
    return MetricResult(scores=scores, details=details)
