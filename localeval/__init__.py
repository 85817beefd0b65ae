"""localeval: a fully local, offline evaluator for RAG systems.

`localeval.evaluate(rows_or_path, metrics=..., **settings)` is the Python API (localeval.api);
it is imported on first use, so `import localeval` stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"
__all__ = ["EvalResults", "__version__", "evaluate"]

if TYPE_CHECKING:  # pragma: no cover
    from localeval.api import EvalResults, evaluate


def __getattr__(name: str) -> Any:
    if name in ("evaluate", "EvalResults"):
        from localeval import api

        return getattr(api, name)
    raise AttributeError(f"module 'localeval' has no attribute {name!r}")
