"""answer_similarity(a, g): cosine of the embeddings; with a threshold, 1 if ≥ threshold else 0.

The embedder is the run's, except that a sample in a language the run's embedder was not made
for is embedded by the manifest's embedder of its language when present (embed.store_for): the
Chinese m3e-small gives about 0.9 to any two English texts. Details name the embedder used.
"""

from __future__ import annotations

from localeval.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric


@metric("answer_similarity", requires=("answer", "ground_truth"), embedder=True,
        description="cosine similarity of answer and ground truth embeddings")
async def answer_similarity(sample: Sample, ctx: MetricContext) -> MetricResult:
    store = await ctx.embedder()
    cos = await store.cosine(sample.answer or "", sample.ground_truth or "")
    details: dict[str, object] = {"cosine": cos, "embedder": store.embedder.name}
    threshold = ctx.settings.similarity_threshold
    if threshold is None:
        return MetricResult(scores={"answer_similarity": max(0.0, cos)}, details=details)
    return MetricResult(scores={"answer_similarity": float(cos >= threshold)},
                        details={**details, "threshold": threshold})
