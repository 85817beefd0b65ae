"""Statistics over records: per score key the mean, counts and a bootstrap 95% interval."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from localeval.names import owner_of
from localeval.records import SampleRecord
from localeval.resample import BOOTSTRAP_N, resampled_means


def bootstrap_ci(
    values: list[float], *, n: int = BOOTSTRAP_N, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap 95% interval of the mean (fixed seed: same data → same interval).

    Given paired differences (b_i - a_i) it is the paired bootstrap interval of the mean
    difference: the pairs are resampled together. Memory is O(values + n), never
    O(values × n): see `resampled_means`.
    """
    if len(values) < 2:
        return None
    means = resampled_means(np.asarray(values, dtype=np.float64), n, seed)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def metric_summary(records: list[SampleRecord], owners: dict[str, str]) -> dict[str, Any]:
    """Per score key: mean, n scored, n unscored, n errors, n skipped, a 95% CI, and the judge
    requests its metric asked again split smaller (`details[owner].judge_retries`)."""
    out: dict[str, Any] = {}
    for key, owner in owners.items():
        vals = [float(v) for r in records if (v := r.scores.get(key)) is not None]
        ci = bootstrap_ci(vals)
        out[key] = {
            "metric": owner,
            "mean": float(np.mean(vals)) if vals else None,
            "count": len(vals),
            "unscored": sum(1 for r in records if key in r.scores and r.scores[key] is None),
            "errors": sum(1 for r in records if owner in r.errors),
            "skipped": sum(1 for r in records if owner in r.skipped),
            "ci95": list(ci) if ci else None,
            "judge_retries": sum(_retries(r, owner) for r in records),
        }
    return out


def _retries(record: SampleRecord, owner: str) -> int:
    found = record.details.get(owner)
    n = found.get("judge_retries") if isinstance(found, Mapping) else None
    return n if isinstance(n, int) else 0


def score_keys(
    records: list[SampleRecord], first: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Score key → owning metric: the keys of `first` (in its order), then every other score key
    of the records in order — so a metric that errored everywhere still gets its line."""
    keys = dict(first or {})
    for r in records:
        for key in r.scores:
            keys.setdefault(key, owner_of(key))
    return keys


def recompute_metrics(records: list[SampleRecord], stored: Mapping[str, Any]) -> dict[str, Any]:
    """metric_summary over records, keeping the keys (and owners) of a stored summary first."""
    first = {}
    for key, m in stored.items():
        owner = m.get("metric") if isinstance(m, Mapping) else None
        first[key] = owner if isinstance(owner, str) else owner_of(key)
    return metric_summary(records, score_keys(records, first))
