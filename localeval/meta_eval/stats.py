"""Agreement statistics (numpy only): pairwise outcomes, AUROC, Spearman, Kendall tau-b, Cohen's
kappa and a percentile bootstrap with a fixed seed (same data → same interval)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

import numpy as np

from localeval.results.tally import CHUNK, resampled_means

TIE_EPS = 1e-9  # scores closer than this are a tie
BOOTSTRAP_N = 2000
BOOTSTRAP_SEED = 0
BLOCK = 512  # rows compared with all others at once in the O(n²) statistics

WIN, TIE, LOSS = 1.0, 0.5, 0.0


def pair_outcome(preferred_score: float | None, other_score: float | None) -> float:
    """1 when the judge scores the answer people preferred higher, ½ on a tie, 0 when it scores
    it lower or when either side has no score (an unscored pair is a loss, never dropped)."""
    if preferred_score is None or other_score is None:
        return LOSS
    diff = preferred_score - other_score
    if abs(diff) <= TIE_EPS:
        return TIE
    return WIN if diff > 0 else LOSS


def average_ranks(values: Sequence[float]) -> np.ndarray:
    """1-based ranks; tied values share the mean of their ranks."""
    _, inverse, counts = np.unique(
        np.asarray(values, dtype=np.float64), return_inverse=True, return_counts=True
    )
    last = np.cumsum(counts)  # rank of the last member of each group of equal values
    return (last - (counts - 1) / 2)[inverse.reshape(-1)].astype(np.float64)


def auroc(scores: Sequence[float], labels: Sequence[int]) -> float | None:
    """P(a row labelled 1 scores above a row labelled 0), ties counting ½ (Mann-Whitney U).
    None unless both labels are present."""
    y = np.asarray(labels, dtype=np.int64)
    n_pos, n_neg = int((y == 1).sum()), int((y == 0).sum())
    if n_pos == 0 or n_neg == 0:
        return None
    ranks = average_ranks(scores)
    u = ranks[y == 1].sum() - n_pos * (n_pos + 1) / 2
    return float(u / (n_pos * n_neg))


def spearman(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Pearson correlation of the average ranks; None with fewer than 2 rows or a constant side."""
    if len(x) < 2:
        return None
    rx, ry = average_ranks(x), average_ranks(y)
    rx, ry = rx - rx.mean(), ry - ry.mean()
    denom = float(np.sqrt((rx**2).sum() * (ry**2).sum()))
    if denom == 0.0:
        return None
    return float((rx * ry).sum() / denom)


def cohen_kappa(judge: Sequence[int], human: Sequence[int]) -> float | None:
    """Cohen's kappa of two 0/1 labellings of the same rows: (p_o − p_e) / (1 − p_e), p_o the
    share of rows where they agree, p_e the agreement expected by chance from each side's rate
    of 1s. None with no row, or when p_e = 1 (both sides constant and equal: undefined)."""
    a, b = np.asarray(judge, dtype=np.float64), np.asarray(human, dtype=np.float64)
    if a.size == 0:
        return None
    observed = float((a == b).mean())
    expected = float(a.mean() * b.mean() + (1 - a.mean()) * (1 - b.mean()))
    if expected >= 1.0:
        return None
    return (observed - expected) / (1.0 - expected)


def kendall_tau_b(x: Sequence[float], y: Sequence[float]) -> float | None:
    """Kendall's tau-b (ties on either side corrected); None with fewer than 2 rows or a constant
    side. O(n²) time, in blocks of rows so memory stays small."""
    if len(x) < 2:
        return None
    ax, ay = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    concordance = n_x = n_y = 0.0
    for start in range(0, len(ax), BLOCK):  # each block of rows against every row
        dx = np.sign(ax[start : start + BLOCK, None] - ax[None, :])
        dy = np.sign(ay[start : start + BLOCK, None] - ay[None, :])
        concordance += float((dx * dy).sum())
        n_x, n_y = n_x + float((dx != 0).sum()), n_y + float((dy != 0).sum())
    if n_x == 0 or n_y == 0:  # every ordered pair was counted twice, which cancels out
        return None
    return float(concordance / np.sqrt(n_x * n_y))


def bootstrap_ci(
    statistic: Callable[..., float | None],
    *columns: Sequence[float],
    n: int = BOOTSTRAP_N,
    seed: int = BOOTSTRAP_SEED,
) -> tuple[float, float] | None:
    """Percentile bootstrap 95 % interval of `statistic(*columns)`: rows are resampled together
    (n resamples, fixed seed). Resamples where the statistic is undefined (e.g. one class only)
    are dropped; None with fewer than 2 rows or when no resample is defined."""
    arrays = [np.asarray(c, dtype=np.float64) for c in columns]
    size = len(arrays[0])
    if size < 2:
        return None
    if len(arrays) == 1 and statistic is mean:  # vectorised fast path
        values = resampled_means(arrays[0], n, seed)
    else:
        found = (statistic(*(a[i] for a in arrays)) for i in _resamples(size, n, seed))
        values = np.asarray([v for v in found if v is not None], dtype=np.float64)
    if values.size == 0:
        return None
    lo, hi = np.percentile(values, [2.5, 97.5])
    return float(lo), float(hi)


def _resamples(size: int, n: int, seed: int) -> Iterator[np.ndarray]:
    """n index resamples of range(size), drawn CHUNK numbers at a time from one generator (the
    same indices as drawing all n at once, in O(CHUNK) memory)."""
    rng = np.random.default_rng(seed)
    rows = max(1, CHUNK // size)
    for start in range(0, n, rows):
        yield from rng.integers(0, size, size=(min(rows, n - start), size))


def mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None
