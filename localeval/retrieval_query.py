"""One query's ranking metrics in plain Python: the per-row path of `run --metrics retrieval`.

`retrieval.evaluate_report` is vectorised for many queries at once; for a single query its numpy
set-up costs ~0.3 ms, which over a 200,000-row query log is minutes. `score_ranked` computes
the same numbers with the same floating-point operations in the same order (sums in rank order,
log2 and exp2 taken from numpy), so its results equal evaluate_report's bit for bit
(tests/test_retrieval_query.py checks it on random queries).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping, Sequence

import numpy as np

Scores = dict[str, float | None]

_LOG2: list[float] = []  # _LOG2[i] = log2(i + 2): the discount of rank / ideal position i + 1


def _discount(position: int) -> float:
    """log2(position + 1) as numpy computes it (the vectorised path uses np.log2)."""
    if position > len(_LOG2):
        size = max(position, 2 * len(_LOG2), 64)
        _LOG2[:] = np.log2(np.arange(1, size + 1, dtype=np.float64) + 1.0).tolist()
    return _LOG2[position - 1]


@functools.lru_cache(maxsize=1024)
def _exp_gain(grade: float) -> float:
    return float(np.exp2(np.array([grade], dtype=np.float64))[0] - 1.0)


def _gain(grade: float, gain: str) -> float:
    return _exp_gain(grade) if gain == "exponential" else grade


def _sum(values: list[float]) -> float:
    """Left-to-right sum from 0.0, as np.bincount accumulates (not Python's compensated sum)."""
    total = 0.0
    for v in values:
        total += v
    return total


def score_ranked(
    ranked: Sequence[str],
    relevant: Mapping[str, float],
    metrics: Sequence[str],
    at: Sequence[int],
    gain: str,
    ideal: str,
) -> Scores:
    """Scores `{name or name@k: value}` of one query: `ranked` the retrieved ids without repeats,
    `relevant` the ids with a grade > 0 (at least one). Options already checked."""
    position = {d: i for i, d in enumerate(ranked, start=1)}
    hits = sorted((position[d], float(g)) for d, g in relevant.items() if d in position)
    nret = float(len(ranked))
    nrel = float(len(relevant))
    ideal_grades = sorted((float(g) for g in relevant.values()), reverse=True)
    cuts = [(k, [(r, g) for r, g in hits if k is None or r <= k]) for k in (None, *at)]
    out: Scores = {}  # keys in retrieval.metric_names order: each metric, then its cutoffs
    for m in metrics:
        for k, inside in cuts:
            out[m if k is None else f"{m}@{k}"] = _one(
                m, k, inside, float(len(inside)), hits, nret, nrel, ideal_grades, gain, ideal
            )
    return out


def _one(
    m: str,
    k: int | None,
    inside: list[tuple[int, float]],
    h: float,
    hits: list[tuple[int, float]],
    nret: float,
    nrel: float,
    ideal_grades: list[float],
    gain: str,
    ideal: str,
) -> float:
    """One metric at one cutoff; the formulas of retrieval._score_sparse."""
    if m == "hit_rate":
        return 1.0 if h > 0 else 0.0
    if m in ("hit_rate_granular", "recall"):
        return h / nrel
    if m == "mrr":
        first = float(hits[0][0]) if hits else math.inf
        return 1.0 / first if first <= (k or math.inf) else 0.0
    if m == "mrr_granular":
        return _sum([1.0 / float(r) for r, _ in inside]) / h if h > 0 else 0.0
    if m == "precision":
        if k is None:
            return h / nret if nret > 0 else 0.0
        return h / k
    if m == "average_precision":
        return _sum([j / float(r) for j, (r, _) in enumerate(inside, start=1)]) / nrel
    limit = math.inf if k is None else float(k)  # ndcg
    if ideal == "retrieved":
        limit = min(limit, nret)
    idcg = _sum([_gain(g, gain) / _discount(i) for i, g in enumerate(ideal_grades, start=1)
                 if i <= limit])
    dcg = _sum([_gain(g, gain) / _discount(r) for r, g in inside])
    return dcg / idcg if idcg > 0 else 0.0
