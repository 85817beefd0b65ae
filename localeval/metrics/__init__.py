"""Every module of this package is imported here, and each metric registers itself with its
`@metric(...)` decorator: a new metric is one new module (plus its templates), no list to edit.
`REGISTRY` then holds them in the order they declare (`order`, then registration: module name
order) = the report's order."""

import importlib
import pkgutil

from localeval.metrics.base import (
    GROUPS,
    REGISTRY,
    Metric,
    MetricContext,
    MetricResult,
    resolve,
)

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")

for _metric in sorted(REGISTRY.values(), key=lambda m: m.order):  # stable: ties keep their place
    REGISTRY[_metric.name] = REGISTRY.pop(_metric.name)

__all__ = ["GROUPS", "REGISTRY", "Metric", "MetricContext", "MetricResult", "resolve"]
