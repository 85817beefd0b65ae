"""Read TREC qrels and run files, and rank a run the way trec_eval does.

qrels: ``qid iter docid grade`` (grade an integer; <= 0 is not relevant).
run:   ``qid Q0 docid rank score [tag ...]``; the rank column is ignored, as in trec_eval: ids are
ranked by score descending, ties broken by docid descending (byte order of the UTF-8 text).
Like trec_eval, scores are compared as 32-bit floats: scores equal to ~7 significant digits tie.
Blank lines and lines starting with ``#`` are skipped in both.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np

from localeval.errors import DatasetError


class TrecFormatError(DatasetError, ValueError):
    """A qrels or run file is missing, unreadable or has a malformed line."""


@dataclass
class TrecRun:
    """A parsed run: ``{qid: {docid: score}}`` plus what was dropped."""

    scores: dict[str, dict[str, float]]
    run_id: str | None = None
    # (line number, qid, docid) of each repeated id; the best-ranked occurrence is kept.
    duplicates: list[tuple[int, str, str]] = field(default_factory=list)


def _lines(path: str | os.PathLike[str], what: str) -> Iterable[tuple[int, list[str]]]:
    """(line number, fields) of each content line."""
    lineno = 0
    try:
        with open(path, encoding="utf-8") as fh:
            for lineno, line in enumerate(fh, start=1):
                fields = line.split()
                if fields and not fields[0].startswith("#"):
                    yield lineno, fields
    except FileNotFoundError:
        raise TrecFormatError(f"{what} file not found: {os.fspath(path)}") from None
    except UnicodeDecodeError:
        raise TrecFormatError(
            f"{os.fspath(path)}:{lineno + 1}: {what} file is not valid UTF-8"
        ) from None
    except OSError as exc:
        raise TrecFormatError(f"cannot read {what} file {os.fspath(path)}: {exc}") from None


def parse_qrels(
    lines: Iterable[tuple[int, list[str]]], source: str = "<qrels>"
) -> dict[str, dict[str, int]]:
    """``{qid: {docid: grade}}`` from numbered, split lines (see :func:`read_qrels`)."""
    qrels: dict[str, dict[str, int]] = {}
    for lineno, fields in lines:
        if len(fields) != 4:
            raise TrecFormatError(
                f"{source}:{lineno}: malformed qrels line, expected 'qid iter docid grade', "
                f"got {len(fields)} fields"
            )
        qid, _, docid, grade_text = fields
        try:
            grade = int(grade_text)
        except ValueError:
            raise TrecFormatError(
                f"{source}:{lineno}: relevance grade {grade_text!r} is not an integer"
            ) from None
        judged = qrels.setdefault(qid, {})
        if judged.get(docid, grade) != grade:
            raise TrecFormatError(
                f"{source}:{lineno}: doc {docid!r} of query {qid!r} is judged twice "
                f"with different grades ({judged[docid]} and {grade})"
            )
        judged[docid] = grade
    return qrels


def parse_run(lines: Iterable[tuple[int, list[str]]], source: str = "<run>") -> TrecRun:
    """:class:`TrecRun` from numbered, split lines (see :func:`read_run`)."""
    scores: dict[str, dict[str, float]] = {}
    run = TrecRun(scores)
    for lineno, fields in lines:
        if len(fields) < 5:
            raise TrecFormatError(
                f"{source}:{lineno}: malformed run line, expected 'qid Q0 docid rank score tag', "
                f"got {len(fields)} fields"
            )
        qid, docid, score_text = fields[0], fields[2], fields[4]
        try:
            score = float(score_text)
        except ValueError:
            score = math.nan
        if math.isnan(score):
            raise TrecFormatError(f"{source}:{lineno}: score {score_text!r} is not a number")
        if len(fields) > 5:
            run.run_id = fields[5]
        docs = scores.setdefault(qid, {})
        old = docs.get(docid)
        if old is not None:
            run.duplicates.append((lineno, qid, docid))
            # keep the occurrence trec_eval's order would put first
            if score <= old:
                continue
        docs[docid] = score
    return run


def read_qrels(path: str | os.PathLike[str]) -> dict[str, dict[str, int]]:
    """Read a TREC qrels file. Raises :class:`TrecFormatError` naming the bad line."""
    return parse_qrels(_lines(path, "qrels"), os.fspath(path))


def read_run(path: str | os.PathLike[str]) -> TrecRun:
    """Read a TREC run file. A docid repeated within a query keeps its best-ranked line
    (trec_eval refuses such files); the repeats are listed in ``duplicates``."""
    return parse_run(_lines(path, "run"), os.fspath(path))


def rank(scores: Mapping[str, float]) -> list[str]:
    """Docids in trec_eval order: score descending (compared as 32-bit floats, as trec_eval
    stores them), then docid descending."""
    ids = list(scores)
    keys = as_trec_score([scores[d] for d in ids]).tolist()
    return [d for _, d in sorted(zip(keys, ids, strict=True), reverse=True)]


# ---- trec_eval's ranking of a scored run ----------------------------------------------------


def as_trec_score(scores: Any) -> np.ndarray:
    """Scores as trec_eval compares them: rounded to 32-bit floats (its ``float sim``)."""
    with np.errstate(over="ignore"):
        return np.asarray(scores, dtype=np.float64).astype(np.float32)


def ranks_by_score(
    runs: list[Mapping[Any, float]], which: np.ndarray, ids: list[Any], scores: np.ndarray
) -> np.ndarray:
    """1-based rank of ``ids[j]`` (score ``scores[j]``) within ``runs[which[j]]`` in trec_eval
    order: score descending as a 32-bit float, ties broken by id descending (as strings)."""
    out = np.empty(len(ids), dtype=np.int64)
    if not len(ids):
        return out
    lengths = np.fromiter(map(len, runs), np.int64, len(runs))
    flat = np.fromiter(
        chain.from_iterable(r.values() for r in runs), np.float64, int(lengths.sum())
    )
    if np.isnan(flat).any():
        raise ValueError("a run score is NaN")
    width = int(lengths.max())
    table = np.full((len(runs), width), np.nan, dtype=np.float32)
    table[np.arange(width) < lengths[:, None]] = as_trec_score(flat)
    scores = as_trec_score(scores)
    ties: list[int] = []
    step = max(1, 4_000_000 // width)  # bound the temporary (step, width) arrays
    for lo in range(0, len(ids), step):
        part = table[which[lo : lo + step]]
        s = scores[lo : lo + step, None]
        out[lo : lo + step] = (part > s).sum(axis=1) + 1
        ties.extend(np.flatnonzero((part == s).sum(axis=1) > 1) + lo)
    for j in ties:  # equal scores: trec_eval puts the larger id first
        keys = list(runs[which[j]])
        me = str(ids[j])
        tied = np.flatnonzero(table[which[j]] == scores[j])
        out[j] += sum(1 for t in tied if str(keys[t]) > me)
    return out
