"""answer_similarity(a, g): cosine of the embeddings; with a threshold, 1 if ≥ threshold else 0."""

from __future__ import annotations

from localeval.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric


@metric("answer_similarity", requires=("answer", "ground_truth"), embedder=True,
        description="cosine similarity of answer and ground truth embeddings")
async def answer_similarity(sample: Sample, ctx: MetricContext) -> MetricResult:
    cos = await ctx.cosine(sample.answer or "", sample.ground_truth or "")
    threshold = ctx.settings.similarity_threshold
    if threshold is None:
        return MetricResult(scores={"answer_similarity": max(0.0, cos)}, details={"cosine": cos})
    return MetricResult(scores={"answer_similarity": float(cos >= threshold)},
                        details={"cosine": cos, "threshold": threshold})
