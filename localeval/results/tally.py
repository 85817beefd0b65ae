"""Statistics over records: per score key the mean, counts and a bootstrap 95% interval; the
bootstrap resamples in bounded memory (numpy only): the means of n resamples of a score column
without ever holding n × size numbers. numpy is imported only for a key with two values or
more (a mean of one value is that value): a run scoring nothing imports none."""

from __future__ import annotations

from array import array
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from localeval.names import current_key, owner_of
from localeval.results.records import SampleRecord

BOOTSTRAP_N = 2000
EXACT_LIMIT = 5_000  # up to this many values every resample draws its indices (as before)
CHUNK = 1 << 20  # random numbers drawn at once: 8 MB, whatever the number of values

if TYPE_CHECKING:
    import numpy as np


def resampled_means(arr: np.ndarray, n: int, seed: int) -> np.ndarray:
    """The means of n resamples (with replacement, same size) of arr.

    The resamples draw indices, a few resamples at a time from one generator: the same numbers,
    so the same means, as drawing all n × size at once (the intervals of earlier versions).
    Beyond EXACT_LIMIT values that take few distinct values (fewer than 1 in 16, as ranking
    metrics and verdict shares do), a resample's mean is drawn instead from the counts of each
    distinct value, Multinomial(size, frequencies): the same distribution, at a cost of
    n × distinct values instead of n × size (200,000 rows: milliseconds instead of seconds
    per score), but other random numbers, so a slightly different interval than before.
    """
    import numpy as np

    size = len(arr)
    rng = np.random.default_rng(seed)
    if size > EXACT_LIMIT:
        distinct, counts = np.unique(arr, return_counts=True)
        if len(distinct) <= size // 16:
            return _multinomial_means(distinct, counts, n, rng)
    means = np.empty(n, dtype=np.float64)
    rows = max(1, CHUNK // size)
    for start in range(0, n, rows):
        idx = rng.integers(0, size, size=(min(rows, n - start), size))
        means[start : start + len(idx)] = arr[idx].mean(axis=1)
    return means


def _multinomial_means(
    distinct: np.ndarray, counts: np.ndarray, n: int, rng: np.random.Generator
) -> np.ndarray:
    import numpy as np

    size = int(counts.sum())
    freq = counts / size
    means = np.empty(n, dtype=np.float64)
    rows = max(1, CHUNK // len(distinct))
    for start in range(0, n, rows):
        drawn = rng.multinomial(size, freq, size=min(rows, n - start))
        means[start : start + len(drawn)] = drawn @ distinct / size
    return means


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
    import numpy as np

    means = resampled_means(np.asarray(values, dtype=np.float64), n, seed)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def _mean(values: Sequence[float]) -> float | None:
    """numpy's mean (pairwise summation), without numpy for fewer than two values."""
    if len(values) < 2:
        return float(values[0]) if len(values) else None
    import numpy as np

    return float(np.mean(np.asarray(values, dtype=np.float64)))


class ScoreTally:
    """metric_summary built one record at a time, never holding a record: per score key its
    values (8-byte doubles, in record order; 200,000 rows × 24 keys: 38 MB) and unscored count,
    per metric its errors, skips, judge retries and samples the shield flagged (their details
    hold `instructions`, metrics/shield.py), and how many samples it flagged for any metric.
    With `discover`, a score key not in `owners` is added (owner: its prefix) when first seen,
    as `score_keys` orders them."""

    def __init__(self, owners: Mapping[str, str], *, discover: bool = False) -> None:
        self.owners = dict(owners)
        self.values = {key: array("d") for key in self.owners}
        self.unscored = dict.fromkeys(self.owners, 0)
        self.counts: dict[str, list[int]] = {}  # metric → [errors, skipped, judge retries]
        self.flagged: dict[str, int] = {}  # metric → samples the shield flagged
        self.flagged_samples = 0
        self.discover = discover

    def add(self, r: SampleRecord) -> None:
        if self.discover and not self.values.keys() >= r.scores.keys():
            for key in r.scores:
                if key not in self.values:
                    self.owners[key] = owner_of(key)
                    self.values[key], self.unscored[key] = array("d"), 0
        for key, v in r.scores.items():
            column = self.values.get(key)
            if column is None:
                continue
            if v is None:
                self.unscored[key] += 1
            else:
                column.append(float(v))
        for owner in r.errors:
            self._count(owner)[0] += 1
        for owner in r.skipped:
            self._count(owner)[1] += 1
        flagged = False
        for owner, found in r.details.items():
            self._count(owner)[2] += _retries(found)
            if isinstance(found, Mapping) and "instructions" in found:
                self.flagged[owner] = self.flagged.get(owner, 0) + 1
                flagged = True
        self.flagged_samples += flagged

    def _count(self, owner: str) -> list[int]:
        found = self.counts.get(owner)
        if found is None:
            found = self.counts[owner] = [0, 0, 0]
        return found

    def summary(self) -> dict[str, Any]:
        """Per score key: mean, n scored, n unscored, n errors, n skipped, a 95% CI, the
        judge requests its metric asked again split smaller (`details[owner].judge_retries`),
        and, when there are any, the samples the shield flagged for its metric (`flagged`:
        each of their scores is the worse of the material with and without the flagged text)."""
        out: dict[str, Any] = {}
        for key, owner in self.owners.items():
            vals = self.values[key]
            ci = bootstrap_ci(vals)
            errors, skipped, retries = self.counts.get(owner, (0, 0, 0))
            out[key] = {
                "metric": owner,
                "mean": _mean(vals),
                "count": len(vals),
                "unscored": self.unscored[key],
                "errors": errors,
                "skipped": skipped,
                "ci95": list(ci) if ci else None,
                "judge_retries": retries,
            }
            if self.flagged.get(owner):
                out[key]["flagged"] = self.flagged[owner]
        return out

    def shield(self) -> dict[str, Any] | None:
        """The samples the shield flagged (text aimed at the evaluator in their material): how
        many, and per metric; None when it flagged none."""
        if not self.flagged_samples:
            return None
        return {"flagged_samples": self.flagged_samples, "by_metric": dict(self.flagged)}


def metric_summary(records: Iterable[SampleRecord], owners: dict[str, str]) -> dict[str, Any]:
    """ScoreTally.summary over records, for the score keys of `owners` (in its order)."""
    tally = ScoreTally(owners)
    for r in records:
        tally.add(r)
    return tally.summary()


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


def stored_owners(stored: Mapping[str, Any]) -> dict[str, str]:
    """Score key → metric of a stored summary's metrics, in its order (an old key under its
    current name: names.current_key)."""
    first: dict[str, str] = {}
    for key, m in stored.items():
        owner = m.get("metric") if isinstance(m, Mapping) else None
        first.setdefault(current_key(key), owner if isinstance(owner, str) else owner_of(key))
    return first


def recompute_metrics(records: Iterable[SampleRecord], stored: Mapping[str, Any]) -> dict[str, Any]:
    """metric_summary over records (one pass), keeping the keys (and owners) of a stored summary
    first, then every other score key in record order."""
    tally = ScoreTally(stored_owners(stored), discover=True)
    for r in records:
        tally.add(r)
    return tally.summary()
