"""Every module of this package is imported here, and each metric registers itself with its
`@metric(...)` decorator: a new metric is one new module (plus its templates), no list to edit.
`REGISTRY` then holds them in a fixed order (= the report's order)."""

import importlib
import pkgutil

from localeval.metrics.base import (
    GROUPS,
    REGISTRY,
    Metric,
    MetricContext,
    MetricResult,
    check_options,
    resolve,
)

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")

ORDER = ("faithfulness", "answer_relevance", "context_relevance", "context_precision",
         "context_recall", "context_entities_recall", "answer_correctness", "answer_similarity",
         "rerank_relevancy", "hit_rate", "hit_rate_granular", "mrr", "mrr_granular", "precision",
         "recall", "average_precision", "ndcg")
"""Registry (= report) order of the metrics that came first: answer metrics, context metrics,
then the rest; every metric added since comes after them, in name order."""
for _name in sorted(REGISTRY, key=lambda n: (ORDER.index(n) if n in ORDER else len(ORDER), n)):
    REGISTRY[_name] = REGISTRY.pop(_name)

__all__ = ["GROUPS", "REGISTRY", "Metric", "MetricContext", "MetricResult", "check_options",
           "resolve"]
