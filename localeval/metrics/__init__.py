"""The metrics: each module of this package defines one or more, registered by its `@metric(...)`
decorator when the module is imported; a new metric is one new module (plus its templates), no
list to edit. `REGISTRY` imports a module when its metric is first looked up (metrics/<name>.py
for a metric `name`; every module when the name is not found there, or when the registry is
read whole), and holds them in the order they declare (`order`) = the report's order."""

from localeval.metrics.base import (
    GROUPS,
    REGISTRY,
    Metric,
    MetricContext,
    MetricResult,
    group_of,
    resolve,
)

__all__ = ["GROUPS", "REGISTRY", "Metric", "MetricContext", "MetricResult", "group_of", "resolve"]
