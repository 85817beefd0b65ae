"""Every metric registers itself on import; `REGISTRY` then holds them in a fixed order."""

from localeval.metrics import (  # noqa: F401  (registration)
    answer_correctness,
    answer_relevance,
    context_entities,
    context_precision,
    context_recall,
    context_relevance,
    faithfulness,
    rerank,
    retrieval,
    similarity,
)
from localeval.metrics.base import GROUPS, REGISTRY, Metric, MetricContext, MetricResult, resolve

ORDER = ("faithfulness", "answer_relevance", "context_relevance", "context_precision",
         "context_recall", "context_entities_recall", "answer_correctness", "answer_similarity",
         "rerank_relevancy")
"""Registry (= report) order: answer metrics, context metrics, then the rest as registered."""
for _name in sorted(REGISTRY, key=lambda n: ORDER.index(n) if n in ORDER else len(ORDER)):
    REGISTRY[_name] = REGISTRY.pop(_name)

__all__ = ["GROUPS", "REGISTRY", "Metric", "MetricContext", "MetricResult", "resolve"]
