"""Every metric registers itself on import; `REGISTRY` then holds them in a fixed order."""

from localeval.metrics import faithfulness, similarity  # noqa: F401  (registration)
from localeval.metrics.base import GROUPS, REGISTRY, Metric, MetricContext, MetricResult, resolve

__all__ = ["GROUPS", "REGISTRY", "Metric", "MetricContext", "MetricResult", "resolve"]
