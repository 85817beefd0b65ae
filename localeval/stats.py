"""Statistics over records: per score key the mean, counts and a bootstrap 95% interval."""

from __future__ import annotations

from array import array
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from localeval.names import owner_of
from localeval.records import SampleRecord
from localeval.resample import BOOTSTRAP_N, resampled_means


def bootstrap_ci(
    values: Sequence[float] | np.ndarray, *, n: int = BOOTSTRAP_N, seed: int = 0
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
    requests its metric asked again split smaller (`details[owner].judge_retries`). One pass
    over the records; the scores are kept as 8-byte doubles (200,000 rows × 24 keys: 38 MB)."""
    values, unscored = _score_columns(records, owners)
    counts = _owner_counts(records, set(owners.values()))
    out: dict[str, Any] = {}
    for key, owner in owners.items():
        vals = np.asarray(values[key], dtype=np.float64)
        ci = bootstrap_ci(vals)
        errors, skipped, retries = counts[owner]
        out[key] = {
            "metric": owner,
            "mean": float(np.mean(vals)) if len(vals) else None,
            "count": len(vals),
            "unscored": unscored[key],
            "errors": errors,
            "skipped": skipped,
            "ci95": list(ci) if ci else None,
            "judge_retries": retries,
        }
    return out


def _score_columns(
    records: list[SampleRecord], owners: Mapping[str, str]
) -> tuple[dict[str, array], dict[str, int]]:
    """Per score key, its values in record order and how many records hold it unscored."""
    values = {key: array("d") for key in owners}
    unscored = dict.fromkeys(owners, 0)
    for r in records:
        for key, v in r.scores.items():
            column = values.get(key)
            if column is None:
                continue
            if v is None:
                unscored[key] += 1
            else:
                column.append(float(v))
    return values, unscored


def _owner_counts(records: list[SampleRecord], owners: set[str]) -> dict[str, list[int]]:
    """Per metric: [records it errored on, records it skipped, judge requests asked again]."""
    counts = {owner: [0, 0, 0] for owner in owners}
    for r in records:
        for owner in r.errors:
            if owner in counts:
                counts[owner][0] += 1
        for owner in r.skipped:
            if owner in counts:
                counts[owner][1] += 1
        for owner, found in r.details.items():
            if owner in counts:
                counts[owner][2] += _retries(found)
    return counts


def _retries(found: Any) -> int:
    n = found.get("judge_retries") if isinstance(found, Mapping) else None
    return n if isinstance(n, int) else 0


def score_keys(
    records: list[SampleRecord], first: Mapping[str, str] | None = None
) -> dict[str, str]:
    """Score key → owning metric: the keys of `first` (in its order), then every other score key
    of the records in order — so a metric that errored everywhere still gets its line."""
    keys = dict(first or {})
    for r in records:
        if keys.keys() >= r.scores.keys():  # the usual case: nothing new (a check in C)
            continue
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
