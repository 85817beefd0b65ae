"""Spreading a run over the workers of a Ray cluster (`localeval run --ray`); see docs/ray.md.

`options`: the `--ray` options (no Ray import). `executor`: the RayExecutor, in the process that
starts the run (Ray calls it the driver). `worker`: one Ray actor per GPU (or per N CPUs) that
evaluates samples. The last two import Ray only when a run uses it.
"""

from localeval.distributed.options import RayOptions

__all__ = ["RayOptions"]
