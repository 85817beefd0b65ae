"""Ranking metrics over ids (DESIGN.md section 6, "retrieval"); pure numpy, vectorised.

Definitions, edge cases and the trec_eval measure each metric matches are in
``localeval/docs/retrieval.md``. In short: E is the set of relevant ids (grade > 0), R the
retrieved ids in rank order with repeats dropped (an id counts once, at its first rank),
``name@k`` looks only at the first k ranks. A query without relevant ids is unscored
(``None`` plus a reason).
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator, Mapping, Sequence
from itertools import repeat
from typing import Any

import numpy as np

from localeval.retrieval.options import (
    DEFAULT_GAIN,
    RETRIEVAL_METRICS,
    RetrievalReport,
    Scores,
    check_options,
    metric_names,
)
from localeval.retrieval.trec import ranks_by_score

# --------------------------------------------------------------------------- core
#
# Sparse and vectorised: a query is described by its relevant retrieved ids only ("hits": row,
# rank, grade), its list length and its relevant grades. Every metric is then a per-row sum
# over hits (np.bincount, summed in rank order like trec_eval), so the cost is one short Python
# pass per query to find the hits, plus numpy work proportional to the number of hits.


def _gain(grades: np.ndarray, gain: str) -> np.ndarray:
    """Gain per grade (> 0): linear g or exponential 2^g - 1."""
    return np.exp2(grades) - 1.0 if gain == "exponential" else grades


def _sums(rows: np.ndarray, weights: np.ndarray, n: int) -> np.ndarray:
    return np.bincount(rows, weights=weights, minlength=n)


def _starts(rows: np.ndarray) -> np.ndarray:
    """Index where each run of equal values begins in a sorted array."""
    if not len(rows):
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.r_[True, rows[1:] != rows[:-1]])


def _score_sparse(
    n: int,
    nret: np.ndarray,
    hit_row: np.ndarray,
    hit_rank: np.ndarray,
    hit_grade: np.ndarray,
    ideal_row: np.ndarray,
    ideal_grade: np.ndarray,
    metrics: Sequence[str],
    at: Sequence[int],
    gain: str,
    ideal: str,
) -> dict[str, np.ndarray]:
    """Score n queries from their hits (relevant ids retrieved: row, 1-based rank, grade > 0),
    list lengths ``nret`` and relevant grades (``ideal_row``, ``ideal_grade``, grade > 0).
    Every row must have at least one relevant grade."""
    order = np.lexsort((hit_rank, hit_row))
    row, rank, grade = hit_row[order], hit_rank[order].astype(np.float64), hit_grade[order]
    starts = _starts(row)
    first_idx = np.repeat(starts, np.diff(np.r_[starts, len(row)]))
    hits_so_far = np.arange(1, len(row) + 1) - first_idx  # hits up to and including this one
    first_rank = np.full(n, np.inf)
    first_rank[row[starts]] = rank[starts]

    order = np.lexsort((-ideal_grade, ideal_row))
    irow, igrade = ideal_row[order], ideal_grade[order]
    istarts = _starts(irow)
    nrel_int = np.diff(np.r_[istarts, len(irow)])
    ipos = np.arange(1, len(irow) + 1) - np.repeat(istarts, nrel_int)  # position in ideal order
    nrel = np.zeros(n)
    nrel[irow[istarts]] = nrel_int

    wanted = set(metrics)
    if "ndcg" in wanted:
        dcg_terms = _gain(grade, gain) / np.log2(rank + 1.0)
        idcg_terms = _gain(igrade, gain) / np.log2(ipos + 1.0)
    out: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for k in (None, *at):
            inside = np.ones(len(row), bool) if k is None else rank <= k
            r_in = row[inside]
            h = np.bincount(r_in, minlength=n).astype(np.float64)
            suffix = "" if k is None else f"@{k}"
            for m in metrics:
                if m == "hit_rate":
                    v = (h > 0).astype(np.float64)
                elif m in ("hit_rate_granular", "recall"):
                    v = h / nrel
                elif m == "mrr":
                    v = np.where(first_rank <= (k or np.inf), 1.0 / first_rank, 0.0)
                elif m == "mrr_granular":
                    v = np.where(h > 0, _sums(r_in, 1.0 / rank[inside], n) / h, 0.0)
                elif m == "precision":
                    v = np.where(nret > 0, h / nret, 0.0) if k is None else h / k
                elif m == "average_precision":
                    v = _sums(r_in, hits_so_far[inside] / rank[inside], n) / nrel
                else:  # ndcg
                    limit = np.full(len(irow), np.inf if k is None else k)
                    if ideal == "retrieved":
                        limit = np.minimum(limit, nret[irow])
                    ideal_in = ipos <= limit
                    idcg = _sums(irow[ideal_in], idcg_terms[ideal_in], n)
                    dcg = _sums(r_in, dcg_terms[inside], n)
                    v = np.where(idcg > 0, dcg / idcg, 0.0)
                out[m + suffix] = v
    return out


@contextlib.contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the cyclic GC: building ~1e5 small containers (no cycles) over a large heap of
    queries otherwise triggers full collections that cost more than the scoring itself."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def evaluate_report(
    qrels: Mapping[str, Mapping[Any, float]],
    run: Mapping[str, Sequence[Any] | Mapping[Any, float]],
    *,
    metrics: Sequence[str] = RETRIEVAL_METRICS,
    at: Sequence[int] = (),
    gain: str = DEFAULT_GAIN,
    ideal: str = "all",
) -> RetrievalReport:
    """Score every query of ``qrels`` against ``run``, vectorised; see :func:`evaluate`."""
    metrics, at = check_options(metrics, at, gain, ideal)
    with _gc_paused():
        return _evaluate(qrels, run, metrics, at, gain, ideal)


def _evaluate(
    qrels: Mapping[str, Mapping[Any, float]],
    run: Mapping[str, Sequence[Any] | Mapping[Any, float]],
    metrics: tuple[str, ...],
    at: tuple[int, ...],
    gain: str,
    ideal: str,
) -> RetrievalReport:
    names = metric_names(metrics, at)
    scored: list[str] = []
    skipped: list[str] = []
    missing: list[str] = []
    nret: list[int] = []
    ideal_grades: list[float] = []
    ideal_rows: list[int] = []
    hit_rows: list[int] = []
    hit_grades: list[float] = []
    hit_ranks: list[int] = []  # lists: 1-based rank
    by_score_rows: list[int] = []  # mappings: ranked afterwards from the scores
    by_score_ids: list[Any] = []
    by_score_vals: list[float] = []
    by_score_grades: list[float] = []
    by_score_runs: list[Mapping[Any, float]] = []  # one per query with hits
    by_score_which: list[int] = []  # index into by_score_runs, per hit
    for qid, judged in qrels.items():
        if judged and min(judged.values()) > 0:
            relevant = judged
        else:
            relevant = {d: g for d, g in judged.items() if g > 0}
        if not relevant:
            skipped.append(qid)
            continue
        i = len(scored)
        scored.append(qid)
        ideal_grades.extend(relevant.values())
        ideal_rows.extend(repeat(i, len(relevant)))
        entry = run.get(qid)
        if entry is None:
            missing.append(qid)
            nret.append(0)
        elif isinstance(entry, Mapping):
            nret.append(len(entry))
            found = [d for d in relevant if d in entry]
            if found:
                by_score_rows.extend(repeat(i, len(found)))
                by_score_ids.extend(found)
                by_score_vals.extend(map(entry.__getitem__, found))
                by_score_grades.extend(map(relevant.__getitem__, found))
                by_score_which.extend(repeat(len(by_score_runs), len(found)))
                by_score_runs.append(entry)
        else:
            if isinstance(entry, (str, bytes)):
                raise TypeError(f"run entry of query {qid!r} must be a list of ids, not a string")
            if not isinstance(entry, (list, tuple)):
                entry = list(entry)
            present = set(entry)
            if len(present) != len(entry):  # an id repeated: keep its first rank only
                entry = list(dict.fromkeys(entry))
            nret.append(len(entry))
            found = [d for d in relevant if d in present]
            if found:
                hit_rows.extend(repeat(i, len(found)))
                hit_grades.extend(map(relevant.__getitem__, found))
                hit_ranks.extend(entry.index(d) + 1 for d in found)
    unjudged = [q for q in run if q not in qrels]

    n = len(scored)
    vals = np.array(by_score_vals, dtype=np.float64)
    which = np.array(by_score_which, dtype=np.int64)
    ranks = ranks_by_score(by_score_runs, which, by_score_ids, vals)
    cols = _score_sparse(
        n,
        np.array(nret, dtype=np.float64),
        np.array(hit_rows + by_score_rows, dtype=np.int64),
        np.concatenate([np.array(hit_ranks, dtype=np.int64), ranks]),
        np.array(hit_grades + by_score_grades, dtype=np.float64),
        np.array(ideal_rows, dtype=np.int64),
        np.array(ideal_grades, dtype=np.float64),
        metrics,
        at,
        gain,
        ideal,
    )
    table = np.column_stack([cols[nm] for nm in names]) if n else np.zeros((0, len(names)))
    none_row: Scores = dict.fromkeys(names)
    rows = iter(table.tolist())  # scored queries, in qrels order
    unscored = set(skipped)
    per_query: dict[str, Scores] = {
        q: dict(none_row) if q in unscored else dict(zip(names, next(rows), strict=True))
        for q in qrels
    }
    means: Scores = (
        dict(zip(names, table.mean(axis=0).tolist(), strict=True)) if n else dict(none_row)
    )
    return RetrievalReport(names, per_query, means, n, skipped, missing, unjudged)


def evaluate(
    qrels: Mapping[str, Mapping[Any, float]],
    run: Mapping[str, Sequence[Any] | Mapping[Any, float]],
    **options: Any,
) -> dict[str, dict[str, float | None]]:
    """Per-query scores ``{qid: {name or name@k: value}}`` for every query of ``qrels``.

    ``run`` maps a query to its ids in rank order, or to ``{id: score}`` (ranked by score
    descending, ties by id descending, as trec_eval). Ids are compared as given (use strings).
    A query of the qrels absent from the run scores 0; one without a relevant id gets ``None``.
    Queries of the run absent from the qrels are ignored. ``options``: those of
    :func:`evaluate_report` (metrics, at, gain, ideal).
    """
    return evaluate_report(qrels, run, **options).per_query


def mean_scores(per_query: Mapping[str, Mapping[str, float | None]]) -> Scores:
    """Mean of each score over the queries that have one (``None`` when none has)."""
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for row in per_query.values():
        for name, v in row.items():
            sums.setdefault(name, 0.0)
            counts.setdefault(name, 0)
            if v is not None:
                sums[name] += v
                counts[name] += 1
    return {n: (sums[n] / counts[n] if counts[n] else None) for n in sums}
