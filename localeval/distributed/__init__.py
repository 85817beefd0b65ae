"""Spreading a run over the workers of a Ray cluster (`localeval run --ray`); see docs/ray.md.

`options` has no Ray import; `driver` and `worker` import Ray only when a run uses it.
"""

from localeval.distributed.options import RayOptions

__all__ = ["RayOptions"]
