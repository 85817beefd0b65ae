"""One query's ranking metrics in plain Python: the per-row path of `run --metrics retrieval`.

`retrieval.batch.evaluate_report` is vectorised for many queries at once; for a single query
its numpy set-up costs ~0.3 ms, which over a 200,000-row query log is minutes. `score_ranked`
computes the same numbers with the same floating-point operations in the same order (sums in rank
order, log2 and exp2 taken from numpy), so its results equal evaluate_report's bit for bit
(tests/test_retrieval_query.py checks it on random queries).
"""

from __future__ import annotations

import bisect
import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np

from localeval.retrieval.options import (
    DEFAULT_GAIN,
    NO_RELEVANT_REASON,
    RETRIEVAL_METRICS,
    Scores,
    check_options,
    metric_names,
)
from localeval.text import normalize as normalize_text

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


def score_ranked(
    ranked: Sequence[str],
    relevant: Mapping[str, float],
    metrics: Sequence[str],
    at: Sequence[int],
    gain: str,
    ideal: str,
) -> Scores:
    """Scores `{name or name@k: value}` of one query: `ranked` the retrieved ids without repeats,
    `relevant` the ids with a grade > 0 (at least one). Options already checked.

    The hits (relevant ids retrieved) in rank order give running sums, left to right from 0.0
    as np.bincount adds: sum[j] covers the first j hits, and the hits above a cutoff are a
    prefix, so each metric at each cutoff is one lookup."""
    position = {d: i for i, d in enumerate(ranked, start=1)}
    hits = sorted((position[d], float(g)) for d, g in relevant.items() if d in position)
    ranks = [r for r, _ in hits]
    rr, ap, dcg = [0.0], [0.0], [0.0]  # Σ 1/rank, Σ hits so far/rank, Σ gain/log2(rank + 1)
    for j, (r, g) in enumerate(hits, start=1):
        rr.append(rr[-1] + 1.0 / float(r))
        ap.append(ap[-1] + j / float(r))
        dcg.append(dcg[-1] + _gain(g, gain) / _discount(r))
    idcg = [0.0]  # over the relevant grades in descending order
    for i, g in enumerate(sorted((float(g) for g in relevant.values()), reverse=True), start=1):
        idcg.append(idcg[-1] + _gain(g, gain) / _discount(i))
    nret, nrel = float(len(ranked)), float(len(relevant))
    first = float(ranks[0]) if ranks else math.inf
    out: Scores = {}  # keys in retrieval.metric_names order: each metric, then its cutoffs
    for m in metrics:
        for k in (None, *at):
            h = len(ranks) if k is None else bisect.bisect_right(ranks, k)
            if m == "hit_rate":
                v = 1.0 if h > 0 else 0.0
            elif m in ("hit_rate_granular", "recall"):
                v = h / nrel
            elif m == "mrr":
                v = 1.0 / first if first <= (k or math.inf) else 0.0
            elif m == "mrr_granular":
                v = rr[h] / h if h > 0 else 0.0
            elif m == "precision":
                v = (h / nret if nret > 0 else 0.0) if k is None else h / k
            elif m == "average_precision":
                v = ap[h] / nrel
            else:  # ndcg: the ideal over all relevant grades, or as many as were retrieved
                limit = len(idcg) - 1 if k is None else min(k, len(idcg) - 1)
                if ideal == "retrieved":
                    limit = min(limit, len(ranked))
                v = dcg[h] / idcg[limit] if idcg[limit] > 0 else 0.0
            out[m if k is None else f"{m}@{k}"] = v
    return out


def _as_id(x: Any) -> str:
    return x if isinstance(x, str) else str(x)


def _check_list(value: Any, what: str) -> None:
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise TypeError(f"{what} must be a list, got {type(value).__name__}")


def _expected_grades(expected: Any) -> dict[str, float]:
    """``{id: grade}`` from a list of ids (grade 1) or a mapping of grades."""
    if isinstance(expected, Mapping):
        out: dict[str, float] = {}
        for k, g in expected.items():
            if isinstance(g, bool):
                g = int(g)
            if not isinstance(g, (int, float)) or math.isnan(g):
                raise ValueError(f"relevance grade of {k!r} must be a number, got {g!r}")
            out[_as_id(k)] = g
        return out
    _check_list(expected, "expected ids")
    return dict.fromkeys(map(_as_id, expected), 1)


def score_query(
    retrieved: Sequence[Any],
    expected: Sequence[Any] | Mapping[Any, float],
    *,
    at: Sequence[int] = (),
    gain: str = DEFAULT_GAIN,
    ideal: str = "all",
    metrics: Sequence[str] = RETRIEVAL_METRICS,
) -> tuple[Scores, str | None]:
    """Score one query: ``({name or name@k: value}, reason if unscored else None)``; the same
    numbers as :func:`evaluate_report`, in plain Python (score_ranked above).

    ``expected`` is a list of ids (binary) or ``{id: grade}``; ids are compared as strings
    (``1`` matches ``"1"``). Without a relevant id every value is ``None`` and a reason is given.
    """
    _check_list(retrieved, "retrieved ids")
    grades = _expected_grades(expected)
    metrics, at = check_options(metrics, at, gain, ideal)
    relevant = {d: g for d, g in grades.items() if g > 0}
    if not relevant:
        return dict.fromkeys(metric_names(metrics, at)), NO_RELEVANT_REASON
    ranked = list(dict.fromkeys(map(_as_id, retrieved)))  # an id counts once, at its first rank
    return score_ranked(ranked, relevant, metrics, at, gain, ideal), None


def score_texts(
    retrieved_texts: Sequence[str],
    expected_texts: Sequence[str] | Mapping[str, float],
    **kw: Any,
) -> tuple[Scores, str | None]:
    """:func:`score_query` on texts matched after :func:`normalize_text`.

    Expected texts that normalise to the empty string are dropped (they could only match empty
    contexts); two expected texts equal after normalisation count as one.
    """
    _check_list(retrieved_texts, "retrieved texts")
    if isinstance(expected_texts, Mapping):
        exp: dict[str, float] | list[str] = {}
        for t, g in expected_texts.items():
            key = normalize_text(str(t))
            if key:
                exp[key] = max(g, exp.get(key, g))
    else:
        _check_list(expected_texts, "expected texts")
        exp = [k for k in (normalize_text(str(t)) for t in expected_texts) if k]
    return score_query([normalize_text(str(t)) for t in retrieved_texts], exp, **kw)
