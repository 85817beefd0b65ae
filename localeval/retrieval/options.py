"""The retrieval metrics' names and options: which metrics, cutoffs (`name@k`), gain and
ideal; validated once (`check_options`) for the vectorised path (`batch`) and the per-row one
(`query`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from localeval.errors import ConfigError
from localeval.names import did_you_mean

RETRIEVAL_METRICS: tuple[str, ...] = (
    "hit_rate",
    "hit_rate_granular",
    "mrr",
    "mrr_granular",
    "precision",
    "recall",
    "average_precision",
    "ndcg",
)
GAINS: tuple[str, ...] = ("linear", "exponential")
DEFAULT_GAIN = "linear"  # trec_eval's and the seed document's; exponential (2^g - 1) on request
IDEALS: tuple[str, ...] = ("all", "retrieved")
NO_RELEVANT_REASON = "no relevant ids in the expected set (no grade > 0)"

Scores = dict[str, float | None]


class RetrievalOptionError(ConfigError, ValueError):
    """Unknown metric, bad cutoff, gain or ideal."""


@dataclass
class RetrievalReport:
    """Everything :func:`evaluate_report` found, for the CLI and the runner's summary."""

    names: list[str]
    per_query: dict[str, Scores]
    means: Scores
    scored: int
    skipped: list[str] = field(default_factory=list)  # judged, but no relevant id: unscored
    missing: list[str] = field(default_factory=list)  # relevant ids, absent from the run: 0
    unjudged: list[str] = field(default_factory=list)  # in the run, not in the qrels: ignored


def check_options(
    metrics: Sequence[str] = RETRIEVAL_METRICS,
    at: Sequence[int] = (),
    gain: str = DEFAULT_GAIN,
    ideal: str = "all",
) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Validate options; return (metrics, cutoffs) without repeats."""
    if isinstance(metrics, str):
        metrics = [metrics]
    out_m: list[str] = []
    for m in metrics:
        if m not in RETRIEVAL_METRICS:
            raise RetrievalOptionError(
                f"unknown retrieval metric {m!r}{did_you_mean(m, RETRIEVAL_METRICS)} "
                f"(known: {', '.join(RETRIEVAL_METRICS)})"
            )
        if m not in out_m:
            out_m.append(m)
    out_k: list[int] = []
    for k in at:
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
            raise RetrievalOptionError(f"cutoff must be a positive integer, got {k!r}")
        if int(k) not in out_k:
            out_k.append(int(k))
    if gain not in GAINS:
        raise RetrievalOptionError(f"gain must be one of {', '.join(GAINS)}, got {gain!r}")
    if ideal not in IDEALS:
        raise RetrievalOptionError(f"ideal must be one of {', '.join(IDEALS)}, got {ideal!r}")
    return tuple(out_m), tuple(out_k)


def metric_names(metrics: Sequence[str] = RETRIEVAL_METRICS, at: Sequence[int] = ()) -> list[str]:
    """Output keys in order: each metric, then ``metric@k`` for each cutoff."""
    return [n for m in metrics for n in (m, *(f"{m}@{k}" for k in at))]
