"""Bootstrap resampling in bounded memory (numpy only): the means of n resamples of a score
column without ever holding n × size numbers."""

from __future__ import annotations

import numpy as np

BOOTSTRAP_N = 2000
EXACT_LIMIT = 5_000  # up to this many values every resample draws its indices (as before)
CHUNK = 1 << 20  # random numbers drawn at once: 8 MB, whatever the number of values


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
    size = int(counts.sum())
    freq = counts / size
    means = np.empty(n, dtype=np.float64)
    rows = max(1, CHUNK // len(distinct))
    for start in range(0, n, rows):
        drawn = rng.multinomial(size, freq, size=min(rows, n - start))
        means[start : start + len(drawn)] = drawn @ distinct / size
    return means
