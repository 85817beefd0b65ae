"""Per-sample records and results.jsonl: appended and flushed as samples finish, read back
tolerantly (a line cut short by a crash, a hand-edited duplicate), rewritten in input order."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from localeval.errors import DatasetError, OutputError

RESULTS_FILE = "results.jsonl"
REJECTED_FILE = "results.rejected.jsonl"  # unreadable lines moved aside by a rewrite, never lost


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


def _write_error(path: Path, exc: OSError) -> OutputError:
    return OutputError(
        f"cannot write {path}: {exc.strerror or exc}; the samples finished so far are saved — "
        "free some space (or fix the folder's permissions) and run again with --resume"
    )


class ResultsWriter:
    """Appends one JSON line per finished sample and fsyncs, so a crash loses nothing done.

    A write that fails part-way (disk full, file size limit) is cut back off, so every line in
    the file always parses; the failure is an OutputError.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            self._fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        except OSError as exc:
            raise _write_error(path, exc) from None

    def write(self, record: SampleRecord) -> None:
        data = memoryview((record.model_dump_json() + "\n").encode("utf-8"))
        start = os.lseek(self._fd, 0, os.SEEK_END)
        try:
            while data:
                data = data[os.write(self._fd, data) :]
            os.fsync(self._fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, start)
            raise _write_error(self.path, exc) from None

    def close(self) -> None:
        os.close(self._fd)


@dataclass
class ReadResults:
    """What results.jsonl holds. `good_bytes`: length of the file up to its last complete line."""

    records: list[SampleRecord]
    bad_lines: list[int] = field(default_factory=list)
    bad_raw: list[bytes] = field(default_factory=list)
    duplicates: list[tuple[str, int, int]] = field(default_factory=list)  # id, first, later line
    incomplete_tail: bool = False
    good_bytes: int = 0

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
        for rid, first, later in self.duplicates[:10]:
            out.append(
                f"results.jsonl holds id {rid!r} twice (lines {first} and {later}); "
                f"the later line is kept"
            )
        return out


def read_results(path: Path) -> ReadResults:
    """Read results.jsonl tolerantly: an unreadable line is noted, never fatal.

    A last line without its newline that does not parse (a write cut by a crash or power cut)
    is reported as an incomplete tail; `good_bytes` tells where to truncate before appending
    again. When an id occurs twice, the later record wins and the pair is noted.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ReadResults(records=[])
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc.strerror or exc}") from None
    by_id: dict[str, tuple[int, SampleRecord]] = {}
    out = ReadResults(records=[])
    pos = 0
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        last = number == len(lines)
        end = pos + len(raw) + (0 if last else 1)
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
                by_id[record.id] = (number, record)
        elif not last:
            out.good_bytes = end
        pos = end
    out.records = [r for _, r in by_id.values()]
    return out


def prepare_append(path: Path, read: ReadResults) -> None:
    """Cut an incomplete last line off results.jsonl and end the file with a newline."""
    try:
        size = path.stat().st_size
        with open(path, "r+b") as f:
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
        raise _write_error(path, exc) from None


def rewrite_in_order(path: Path, lines: Mapping[str, int]) -> list[SampleRecord]:
    """Rewrite results.jsonl atomically in input order and return its records.

    Every record the file holds is kept (its `line` updated from `lines`, id → the row's current
    line); only a duplicate id's earlier line gives way to its later one, and lines that are not
    records are moved to results.rejected.jsonl. Nothing finished is ever dropped here.
    """
    read = read_results(path)
    records = read.records
    for r in records:
        r.line = lines.get(r.id, r.line)
    records.sort(key=lambda r: (r.line, r.id))
    tmp = path.with_suffix(".jsonl.tmp")
    try:
        if read.bad_raw:
            with open(path.with_name(REJECTED_FILE), "ab") as f:
                f.write(b"".join(raw + b"\n" for raw in read.bad_raw))
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(r.model_dump_json() + "\n" for r in records)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise _write_error(path, exc) from None
    return records


def input_hash(sample: BaseModel) -> str:
    """A short, stable hash of a row's content (its line number excluded)."""
    payload = json.dumps(
        sample.model_dump(mode="json", exclude={"line"}),
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]
