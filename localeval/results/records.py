"""Per-sample records and results.jsonl: appended as samples finish (fsynced at most once a
second), read back tolerantly, one line at a time (a line cut short by a crash, a hand-edited
duplicate); ordering it is `folder`'s job. Opened without following links (`runfiles`)."""

from __future__ import annotations

import contextlib
import errno
import math
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError, model_validator

from localeval.errors import DatasetError, OutputError
from localeval.names import current_scores, is_old, owner_of
from localeval.results.runfiles import link_error, open_nofollow, write_all

RESULTS_FILE = "results.jsonl"
REJECTED_FILE = "results.rejected.jsonl"  # unreadable lines moved aside by a rewrite, never lost
SYNC_INTERVAL_S = 1.0  # results.jsonl is fsynced at most this long after a record is written
NONFINITE = "the score is not a finite number; run this sample again (--resume redoes it)"
OUT_OF_RANGE = "the score is outside [0, 1]; run this sample again (--resume redoes it)"
SCORE_SLACK = 1e-6  # float rounding (a cosine of 1.0000001) is no out-of-range score
NO_ROOM = {errno.ENOSPC, errno.EFBIG, getattr(errno, "EDQUOT", errno.ENOSPC)}


class SampleRecord(BaseModel):
    """One line of results.jsonl."""

    id: str
    line: int = 0
    language: str = ""
    question: str | None = Field(None, description="the row's question (for reports)")
    answer: str | None = Field(None, description="the row's answer (for reports)")
    input_hash: str = Field(
        "", description="sha256 prefix of the row; --resume redoes a changed row"
    )
    scores: dict[str, float | None] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)
    errors: dict[str, str] = Field(default_factory=dict, description="metric → why it failed")
    skipped: dict[str, str] = Field(
        default_factory=dict, description="metric → why it did not apply"
    )

    @model_validator(mode="after")
    def _current_names(self) -> SampleRecord:
        """An old run folder's score keys (`faithfulness.soft`, a rubric's `.raw`) under their
        current names (names.current_key), so reports and comparisons pair them with new runs'."""
        if any(is_old(key) for key in self.scores):
            self.scores = current_scores(self.scores)
        return self

    @model_validator(mode="after")
    def _finite_scores(self) -> SampleRecord:
        """A NaN, infinite or out-of-range score (every score is in [0, 1]; a bug, or an edit
        of results.jsonl such as 1e308) is no score: it becomes None and an error of its
        metric, so means, gates, comparisons and JSON never see it."""
        for key, value in list(self.scores.items()):
            if value is None:
                continue
            if not math.isfinite(value):
                self.scores[key] = None
                self.errors.setdefault(owner_of(key), f"{NONFINITE} ({key} = {value})")
            elif not -SCORE_SLACK <= value <= 1 + SCORE_SLACK:
                self.scores[key] = None
                self.errors.setdefault(owner_of(key), f"{OUT_OF_RANGE} ({key} = {value:.6g})")
        return self


def has_nonfinite(record: SampleRecord) -> bool:
    """Whether a score of the record was NaN/Infinity or out of [0, 1] when read (see
    SampleRecord): --resume redoes such a sample."""
    return any(e.startswith((NONFINITE, OUT_OF_RANGE)) for e in record.errors.values())


def write_error(path: Path, exc: OSError) -> OutputError:
    if exc.errno == errno.ELOOP:
        return link_error(path)
    return OutputError(
        f"cannot write {path}: {exc.strerror or exc}; the samples finished so far are saved — "
        "free some space (or fix the folder's permissions) and run again with --resume"
    )


class ResultsWriter:
    """Appends one JSON line per finished sample.

    Durability: each line is handed to the kernel at once, so a killed process (kill -9, a crash
    of Python) loses nothing written. The file is fsynced at most once a second (by a background
    thread, at most `SYNC_INTERVAL_S` after a write) and on close, so a power cut or an OS crash
    loses at most the last second of records — `--resume` recomputes them. A write that fails
    part-way (disk full, file size limit) is cut back off, so every line in the file always
    parses; the failure (or a failed fsync) is an OutputError and nothing written before is
    removed.
    """

    def __init__(self, path: Path, interval: float | None = None) -> None:
        self.path = path
        try:
            self._fd = open_nofollow(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        except OSError as exc:
            raise write_error(path, exc) from None
        self._dirty = False
        self._failed: OSError | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._interval = SYNC_INTERVAL_S if interval is None else interval
        self._thread = threading.Thread(target=self._sync_loop, name="results-fsync", daemon=True)
        self._thread.start()

    def write(self, record: SampleRecord) -> None:
        self._raise_failed()
        try:
            write_all(self._fd, (record.model_dump_json() + "\n").encode("utf-8"))
        except OSError as exc:
            raise write_error(self.path, exc) from None
        with self._lock:
            self._dirty = True

    def sync(self) -> None:
        """fsync what was written since the last sync; OutputError when it fails."""
        with self._lock:
            dirty, self._dirty = self._dirty, False
        if dirty:
            try:
                os.fsync(self._fd)
            except OSError as exc:
                self._failed = exc
        self._raise_failed()

    def _raise_failed(self) -> None:
        if self._failed is not None:
            raise write_error(self.path, self._failed)

    def _sync_loop(self) -> None:
        last = time.monotonic()
        while not self._stop.wait(max(0.0, self._interval - (time.monotonic() - last))):
            last = time.monotonic()
            with contextlib.suppress(OutputError):  # kept in _failed: the next write raises it
                self.sync()

    def close(self) -> None:
        """Stop the background sync, fsync what is left, close; OutputError if the sync fails."""
        if self._fd < 0:
            return
        self._stop.set()
        self._thread.join()
        try:
            with self._lock:
                self._dirty = True
            self.sync()
        finally:
            os.close(self._fd)
            self._fd = -1


@dataclass
class ReadResults:
    """What results.jsonl holds. `good_bytes`: length of the file up to its last complete line.
    `records`: the records, or what `read_results` was asked to keep of each."""

    records: list[Any]
    bad_lines: list[int] = field(default_factory=list)
    bad_raw: list[bytes] = field(default_factory=list)
    duplicates: list[tuple[str, int, int]] = field(default_factory=list)  # id, first, later line
    incomplete_tail: bool = False
    good_bytes: int = 0
    nonfinite: list[str] = field(default_factory=list)  # ids: a score NaN, infinite, not in [0, 1]

    def notes(self) -> list[str]:
        out = []
        if self.incomplete_tail:
            out.append(
                "the last line of results.jsonl was cut short (interrupted write); "
                "that sample will be redone"
            )
        mid = self.bad_lines[:-1] if self.incomplete_tail else self.bad_lines
        if mid:
            out.append(
                f"results.jsonl line(s) {', '.join(map(str, mid[:10]))} are not valid "
                f"records and were ignored (a rewrite moves them to {REJECTED_FILE})"
            )
        if self.nonfinite:
            out.append(
                f"results.jsonl holds a score that is not a finite number in [0, 1] (NaN, "
                f"Infinity, out of range) for "
                f"{len(self.nonfinite)} sample(s), e.g. id {self.nonfinite[0]!r}: counted as errors"
            )
        for rid, first, later in self.duplicates[:10]:
            out.append(
                f"results.jsonl holds id {rid!r} twice (lines {first} and {later}); "
                f"the later line is kept"
            )
        return out


def read_results(
    path: Path, keep: Callable[[SampleRecord, int, int], Any] | None = None
) -> ReadResults:
    """Read results.jsonl tolerantly, one line at a time: an unreadable line is noted, never
    fatal. `keep(record, offset, length)` says what to keep of each record (default: the record;
    an index entry keeps a large file's records out of memory).

    A last line without its newline that does not parse (a write cut by a crash or power cut)
    is reported as an incomplete tail; `good_bytes` tells where to truncate before appending
    again. When an id occurs twice, the later record wins and the pair is noted.
    """
    try:
        f = open(path, "rb")  # noqa: SIM115 - closed below
    except FileNotFoundError:
        return ReadResults(records=[])
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from None
    by_id: dict[str, tuple[int, Any, bool]] = {}
    out = ReadResults(records=[])
    pos = 0
    try:
        with f:
            for number, chunk in enumerate(f, start=1):
                last = not chunk.endswith(b"\n")
                raw = chunk if last else chunk[:-1]
                end = pos + len(chunk)
                if raw.strip():
                    try:
                        record = SampleRecord.model_validate_json(raw)
                    except (ValidationError, ValueError):
                        out.bad_lines.append(number)
                        if last:
                            out.incomplete_tail = True
                        else:
                            out.bad_raw.append(raw)
                            out.good_bytes = end
                    else:  # a valid last line without its newline is kept; prepare_append adds it
                        out.good_bytes = end
                        if record.id in by_id:
                            out.duplicates.append((record.id, by_id.pop(record.id)[0], number))
                        item = record if keep is None else keep(record, pos, len(raw))
                        by_id[record.id] = (number, item, has_nonfinite(record))
                elif not last:
                    out.good_bytes = end
                pos = end
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from None
    out.records = [item for _, item, _ in by_id.values()]
    out.nonfinite = [rid for rid, (_, _, bad) in by_id.items() if bad]
    return out


def prepare_append(path: Path, read: ReadResults) -> None:
    """Cut an incomplete last line off results.jsonl and end the file with a newline."""
    try:
        fd = open_nofollow(path, os.O_RDWR)
        with os.fdopen(fd, "r+b") as f:
            size = os.fstat(fd).st_size
            if read.good_bytes < size:
                f.truncate(read.good_bytes)
            if read.good_bytes:
                f.seek(read.good_bytes - 1)
                if f.read(1) != b"\n":
                    f.seek(0, os.SEEK_END)
                    f.write(b"\n")
            f.flush()
            os.fsync(f.fileno())
    except OSError as exc:
        raise write_error(path, exc) from None
