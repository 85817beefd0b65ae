"""Ranking metrics over ids: the vectorised path over many queries (`batch`, used by
`localeval retrieval` on TREC files), the per-row path of `run --metrics retrieval` (`query`),
their options (`options`) and the TREC file formats (`trec`). Definitions and the trec_eval
measure each metric matches: localeval/docs/retrieval.md."""

from localeval.retrieval.batch import evaluate, evaluate_report, mean_scores
from localeval.retrieval.options import (
    DEFAULT_GAIN,
    GAINS,
    IDEALS,
    NO_RELEVANT_REASON,
    RETRIEVAL_METRICS,
    RetrievalOptionError,
    RetrievalReport,
    Scores,
    check_options,
    metric_names,
)
from localeval.retrieval.query import score_query, score_ranked, score_texts

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
