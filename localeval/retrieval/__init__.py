"""Ranking metrics over ids: the vectorised path over many queries (`batch`, used by
`localeval retrieval` on TREC files), the per-row path of `run --metrics retrieval` (`query`),
their options (`options`) and the TREC file formats (`trec`), each imported on first use.
Definitions and the trec_eval measure each metric matches: localeval/docs/retrieval.md."""

from typing import Any

_HOME = {
    "evaluate": "batch", "evaluate_report": "batch", "mean_scores": "batch",
    "score_query": "query", "score_ranked": "query", "score_texts": "query",
    **dict.fromkeys(("DEFAULT_GAIN", "GAINS", "IDEALS", "NO_RELEVANT_REASON", "RETRIEVAL_METRICS",
                     "RetrievalOptionError", "RetrievalReport", "Scores", "check_options",
                     "metric_names"), "options"),
}
"""Each public name's module, imported on first use (a run without a retrieval metric loads
none of them)."""


def __getattr__(name: str) -> Any:
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_HOME[name]}"), name)


__all__ = [
    "DEFAULT_GAIN",
    "GAINS",
    "IDEALS",
    "NO_RELEVANT_REASON",
    "RETRIEVAL_METRICS",
    "RetrievalOptionError",
    "RetrievalReport",
    "Scores",
    "check_options",
    "evaluate",
    "evaluate_report",
    "mean_scores",
    "metric_names",
    "score_query",
    "score_ranked",
    "score_texts",
]
