"""results.jsonl in input order without holding its records: an index of where each record is
(one pass), the file rewritten in input order from it (when there is room), and its records read
back one at a time, in input order, as often as they are asked for."""

from __future__ import annotations

import contextlib
import os
import weakref
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import NamedTuple

from localeval.results.records import (
    NO_ROOM,
    REJECTED_FILE,
    ReadResults,
    SampleRecord,
    has_nonfinite,
    read_results,
    write_error,
)
from localeval.results.runfiles import open_nofollow, write_atomic


class Entry(NamedTuple):
    """Where one record of results.jsonl is, and what a resume needs of it."""

    id: str
    line: int
    input_hash: str
    finite: bool  # no score was NaN/Infinity
    offset: int
    length: int


def index_results(path: Path) -> ReadResults:
    """read_results keeping an Entry per record instead of the record."""
    return read_results(
        path, lambda r, offset, length: Entry(r.id, r.line, r.input_hash, not has_nonfinite(r),
                                              offset, length)
    )


class OrderedResults:
    """The records of results.jsonl in input order, read from the file one at a time (again at
    each iteration), each with its current `line`; `len` reads nothing. The file is opened at
    once and kept open (until `close` or garbage collection): a later atomic rewrite of
    results.jsonl by another run replaces the name, not what this one reads."""

    def __init__(self, path: Path, spans: list[tuple[int, int, int]]) -> None:
        self.path = path
        self._spans = spans  # (offset, length, line) per record, in input order
        self._file = open(path, "rb")  # noqa: SIM115 - closed by close() or the finalizer
        self._closer = weakref.finalize(self, self._file.close)

    def __len__(self) -> int:
        return len(self._spans)

    def __iter__(self) -> Iterator[SampleRecord]:
        f = self._file
        for offset, length, line in self._spans:
            f.seek(offset)  # seek and read in one step: iterations may interleave
            record = SampleRecord.model_validate_json(f.read(length))
            record.line = line
            yield record

    def close(self) -> None:
        self._closer()


def rewrite_in_order(
    path: Path, lines: Mapping[str, int], log: Callable[[str], None] | None = None
) -> OrderedResults:
    """Put results.jsonl in input order (atomically) and return its records, in that order.

    Every record the file holds is kept (its `line` updated from `lines`, id → the row's current
    line); only a duplicate id's earlier line gives way to its later one, and lines that are not
    records are moved to results.rejected.jsonl. A file already in order is left as it is. The
    ordered copy needs as much room again as the file: when the disk (or a size limit) has no
    room for it, the file is left in completion order — every reader sorts by `line` — and `log`
    says so. Nothing finished is ever dropped here. The records are never all in memory.
    """
    read = index_results(path)
    entries: list[Entry] = read.records
    rows = sorted((lines.get(e.id, e.line), e.id, e.offset, e.length) for e in entries)
    spans = [(offset, length, line) for line, _, offset, length in rows]
    stale = any(lines.get(e.id, e.line) != e.line for e in entries)
    if not stale and not read.duplicates and not read.bad_raw and not read.incomplete_tail and (
        all(row[1] == e.id for row, e in zip(rows, entries, strict=True))
    ):
        return OrderedResults(path, spans)
    written: list[tuple[int, int, int]] = []
    try:
        if read.bad_raw:
            flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
            with os.fdopen(open_nofollow(path.with_name(REJECTED_FILE), flags), "ab") as f:
                f.write(b"".join(raw + b"\n" for raw in read.bad_raw))
                f.flush()
                os.fsync(f.fileno())
        write_atomic(path, _in_order(OrderedResults(path, spans), written))
    except OSError as exc:
        if exc.errno not in NO_ROOM:
            raise write_error(path, exc) from None
        if log:
            log(f"note: no room to rewrite {path} in input order ({exc.strerror}); it is kept "
                "in the order samples finished — every sample is in it, and reports sort by line")
        return OrderedResults(path, spans)
    return OrderedResults(path, written)


def _in_order(records: OrderedResults, spans: list[tuple[int, int, int]]) -> Iterator[bytes]:
    """Each record as a line of the ordered file; `spans` gets where each one lands. The file
    read is closed before the ordered copy replaces it."""
    pos = 0
    with contextlib.closing(records):
        for record in records:
            data = (record.model_dump_json() + "\n").encode("utf-8")
            spans.append((pos, len(data) - 1, record.line))
            pos += len(data)
            yield data
