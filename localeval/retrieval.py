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
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

import numpy as np

from localeval.errors import ConfigError
from localeval.names import did_you_mean
from localeval.retrieval_query import score_ranked
from localeval.text import normalize as normalize_text
from localeval.trec import ranks_by_score

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


# --------------------------------------------------------------------------- options


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


# --------------------------------------------------------------------------- per row


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
    numbers as :func:`evaluate_report`, in plain Python (localeval/retrieval_query.py).

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
