"""localeval: a fully local, offline evaluator for RAG systems.

`localeval.evaluate(rows_or_path, metrics=..., **settings)` and
`localeval.generate_testset(docs, ...)` (= `localeval.api.generate`; `localeval.generate` is the
package behind it) are the Python API (localeval.api), `localeval.rubric(name, criteria=...)` a
rubric metric for them (localeval.rubrics); each is imported on first use, so `import localeval`
stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from localeval.version import __version__

__all__ = ["EvalResults", "GeneratedSet", "Rubric", "__version__", "evaluate", "generate_testset",
           "rubric"]

if TYPE_CHECKING:  # pragma: no cover
    from localeval.api import EvalResults, GeneratedSet, evaluate
    from localeval.api import generate as generate_testset
    from localeval.rubrics import Rubric, rubric


def __getattr__(name: str) -> Any:
    if name in ("evaluate", "EvalResults", "generate_testset", "GeneratedSet"):
        from localeval import api

        return getattr(api, "generate" if name == "generate_testset" else name)
    if name in ("rubric", "Rubric"):  # a rubric metric in Python (localeval/docs/rubrics.md)
        from localeval import rubrics

        return getattr(rubrics, name)
    raise AttributeError(f"module 'localeval' has no attribute {name!r}")
