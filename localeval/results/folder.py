"""The folder a run writes (--out): what it is (new, a localeval run, or someone else's), its
lock, opening it fresh, resumed or overwritten, the records appended; results.jsonl put in input
order at the finish without holding its records (an index of where each record is, the file
rewritten from it when there is room, the records read back one at a time); and a run folder
read back (report, compare): its records in input order, with summary.json or what can be
rebuilt without it. run.json and how files are written (durably): `runfiles`."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import re
import stat
import weakref
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from localeval.errors import OutputError, UsageError
from localeval.results.records import (
    NO_ROOM,
    REJECTED_FILE,
    RESULTS_FILE,
    ReadResults,
    ResultsWriter,
    SampleRecord,
    has_nonfinite,
    prepare_append,
    read_results,
    write_error,
)
from localeval.results.runfiles import (
    RUN_FILE,
    SUMMARY_FILE,
    check_resumable,
    fingerprint_of,
    link_error,
    open_nofollow,
    open_regular,
    read_inputs,
    read_json,
    recover_run_file,
    unrecoverable,
    write_atomic,
    write_run_file,
)
from localeval.results.tally import recompute_metrics


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


LOCK_FILE = ".localeval.lock"
# the files a run writes (or replaces) in its folder
OWN_FILES = (RESULTS_FILE, SUMMARY_FILE, RUN_FILE, "report.md", "report.html", REJECTED_FILE)

# ---- what an --out folder is: new, a localeval run, or someone else's -------------------------

_TMP = re.compile(r"\.(" + "|".join(re.escape(n) for n in OWN_FILES) + r")\.[0-9a-f]+\.tmp")


def _entries(out_dir: Path) -> list[str]:
    """The folder's entries other than the lock and localeval's temporary files."""
    try:
        names = sorted(os.listdir(out_dir))
    except (FileNotFoundError, NotADirectoryError):  # to be created (or refused when it cannot)
        return []
    except OSError as exc:
        raise OutputError(f"cannot read --out {out_dir}: {exc.strerror or exc}") from None
    return [n for n in names if n != LOCK_FILE and not _TMP.fullmatch(n)]


def _looks_like_results(path: Path) -> bool:
    """Whether results.jsonl's first line is a record localeval wrote (not, say, a dataset)."""
    try:
        with open_regular(path) as f:
            first = json.loads(f.readline())
    except (OSError, ValueError, RecursionError):
        return False
    return (
        isinstance(first, dict)
        and {"id", "input_hash", "scores"} <= set(first)
        and set(first) <= set(SampleRecord.model_fields)
    )


def classify(out_dir: Path, dataset: Path | None = None) -> str:
    """"new" (missing or empty), "run" (its run.json is one localeval wrote), "damaged" (only
    localeval's files, its results.jsonl localeval's, run.json missing or unreadable); anything
    else is refused with one line saying what to do."""
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {out_dir} is a file, not a folder; choose a folder")
    for name in (*OWN_FILES, LOCK_FILE):
        if (out_dir / name).is_symlink():
            raise link_error(out_dir / name)
        with contextlib.suppress(OSError):
            if not stat.S_ISREG((out_dir / name).lstat().st_mode):
                raise UsageError(
                    f"{out_dir / name} is not a regular file (a folder, FIFO or device) where "
                    "localeval keeps a file of its own; remove it or choose another --out"
                )
    if dataset is not None:
        for name in OWN_FILES:
            with contextlib.suppress(OSError):
                if os.path.samefile(dataset, out_dir / name):
                    raise UsageError(
                        f"the dataset {dataset} is {out_dir / name}, a file localeval writes "
                        "in its --out folder; choose another --out"
                    )
    entries = _entries(out_dir)
    if not entries:
        return "new"
    if read_inputs(out_dir) is not None:
        return "run"
    if set(entries) <= set(OWN_FILES) and _looks_like_results(out_dir / RESULTS_FILE):
        return "damaged"
    shown = ", ".join(entries[:4]) + (f" and {len(entries) - 4} more" if len(entries) > 4 else "")
    raise UsageError(
        f"--out {out_dir} is not empty and is not a localeval run folder (it holds {shown}); "
        "localeval writes only into a new or empty folder or one of its own runs — choose "
        "another --out"
    )


def check_run_folder(path: Path) -> None:
    """`localeval report DIR` rewrites report.md and report.html only in a localeval run folder
    (its run.json, or localeval's results.jsonl), never through a link."""
    for name in ("report.md", "report.html"):
        if (path / name).is_symlink():
            raise link_error(path / name)
    if read_inputs(path) is None and not _looks_like_results(path / RESULTS_FILE):
        raise UsageError(
            f"{path} is not a localeval run folder (no run.json or results.jsonl written by "
            "localeval), so its report files are left alone; give the --out folder of "
            "`localeval run`"
        )


# ---- an open --out folder ----------------------------------------------------------------------


def _lock(out_dir: Path) -> int | None:
    """Hold an exclusive lock on out_dir for this process (released when it exits, even killed).
    None where the platform has no flock; UsageError when another run holds it."""
    return hold_lock(out_dir / LOCK_FILE, f"{out_dir} is in use by another localeval run "
                     "(pid {pid}); wait for it to finish, or choose another --out")


def hold_lock(path: Path, in_use: str) -> int | None:
    """Hold an exclusive flock on the file `path` (created, never through a link) for this
    process; it is released when the process exits, even killed. None where the platform has
    no flock; UsageError `in_use` (its {pid}: the holder's) when another process holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock
        return None
    try:
        fd = open_nofollow(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise link_error(path) from None
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device planted as the lock
        os.close(fd)
        raise UsageError(f"{path} is not a regular file; remove it or choose another --out")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
        os.close(fd)
        raise UsageError(in_use.format(pid=holder)) from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode("ascii"))
    return fd


def lock_holder(path: Path) -> str | None:
    """The pid of the process holding the flock on `path` (a run's lock, `hold_lock`), tested and
    never kept; None when none holds it, there is no such regular file, or no flock."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock to test
        return None
    try:
        fd = open_nofollow(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                return os.read(fd, 32).decode("ascii", "replace").strip() or "?"
            return None
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def _make_dir(out_dir: Path) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise UsageError(f"--out {out_dir} is a file, not a folder; choose a folder")
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create --out {out_dir}: {exc.strerror or exc}") from None


@dataclass
class OutputFolder:
    """An --out folder opened for a run: locked, its earlier results checked, open for appending.

    `previous` holds the ids of the records a resumed run keeps (their rows are unchanged).
    """

    path: Path
    previous: set[str]
    fingerprint: str = ""
    _lock_fd: int | None = None
    _writer: ResultsWriter | None = None

    @classmethod
    def open(
        cls,
        out_dir: Path,
        inputs: Mapping[str, Any],
        hashes: Mapping[str, str],
        *,
        resume: bool,
        overwrite: bool,
        log: Callable[[str], None] | None = None,
        dataset: Path | None = None,
    ) -> OutputFolder:
        """A run writes only into a folder that is new, empty or one of its own runs (run.json
        written by localeval); anything else is refused before a file is touched, and so is a
        link where localeval writes, or `dataset` being one of the files it writes. Without
        resume, a folder that already holds results is an error (results of hours of judging
        are never overwritten silently) unless overwrite is set. With resume, run.json must
        match `inputs` (a missing or unreadable one is rebuilt when summary.json shows the same
        settings), and every finished result must belong to a row of the dataset (a resume never
        deletes a result); a row whose content changed is redone, an incomplete last line (a
        crash mid-write) is cut off and its sample redone."""
        kind = classify(out_dir, dataset)
        _make_dir(out_dir)
        folder = cls(path=out_dir, previous=set(), fingerprint=fingerprint_of(inputs),
                     _lock_fd=_lock(out_dir))
        try:
            kind = classify(out_dir, dataset)  # again, under the lock
            folder.previous = folder._prepare(kind, inputs, hashes, resume, overwrite, log)
            folder._writer = ResultsWriter(out_dir / RESULTS_FILE)
        except BaseException:
            folder.close()
            raise
        return folder

    def _prepare(
        self,
        kind: str,
        inputs: Mapping[str, Any],
        hashes: Mapping[str, str],
        resume: bool,
        overwrite: bool,
        log: Callable[[str], None] | None,
    ) -> set[str]:
        path = self.path / RESULTS_FILE
        exists = path.is_file() and path.stat().st_size > 0
        if exists and not resume and not overwrite:
            n = len(index_results(path).records)
            again = "--overwrite to start it over, " if kind == "run" else ""
            raise UsageError(
                f"{self.path} already holds results ({n} samples in {RESULTS_FILE}); add "
                f"--resume to continue that run, {again}or choose a new --out"
            )
        if not exists or overwrite:
            for name in (RESULTS_FILE, SUMMARY_FILE):
                with contextlib.suppress(FileNotFoundError):
                    (self.path / name).unlink()
            write_run_file(self.path, inputs)
            return set()
        if kind == "damaged":
            if not recover_run_file(self.path, inputs):
                raise unrecoverable(self.path, len(index_results(path).records))
            if log:
                log(f"resume: {RUN_FILE} was missing or unreadable; rebuilt from {SUMMARY_FILE}, "
                    "which shows the same settings")
        check_resumable(self.path, inputs)
        return self._resume(path, hashes, log)

    def _resume(
        self, path: Path, hashes: Mapping[str, str], log: Callable[[str], None] | None
    ) -> set[str]:
        read = index_results(path)  # an entry per record, never every record at once
        entries: list[Entry] = read.records
        gone = [e.id for e in entries if e.id not in hashes]
        if gone:
            shown = ", ".join(repr(i) for i in gone[:5]) + (" ..." if len(gone) > 5 else "")
            raise UsageError(
                f"cannot resume in {self.path}: {len(gone)} finished sample(s) there are not "
                f"in the dataset any more ({shown}); a resume never deletes results — resume "
                "with the dataset they came from, or use a new --out"
            )
        prepare_append(path, read)
        for note in read.notes():
            if log:
                log(f"resume: {note}")
        kept = {e.id for e in entries if e.input_hash == hashes[e.id] and e.finite}
        changed = len(entries) - len(kept)
        if log:
            msg = f"resume: {len(kept)} of {len(hashes)} samples already done in {self.path}"
            if changed:
                msg += f"; {changed} whose row changed (or whose score was NaN) will be redone"
            log(msg)
        return kept

    def write(self, record: SampleRecord) -> None:
        """Append one finished sample to results.jsonl (fsynced within a second)."""
        if self._writer is not None:
            self._writer.write(record)

    def finish(
        self, lines: Mapping[str, int], log: Callable[[str], None] | None = None
    ) -> OrderedResults:
        """Stop appending (fsync); put results.jsonl in input order where there is room for it;
        return every record it holds, in input order (read from the file as they are asked for)."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            writer.close()
        return rewrite_in_order(self.path / RESULTS_FILE, lines, log)

    def close(self) -> None:
        """Close the results file (fsynced, best effort) and release the lock (idempotent)."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            with contextlib.suppress(OutputError):
                writer.close()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def previous_models(out_dir: Path) -> dict[str, Any]:
    """The models of the previous session (from summary.json), for a resumed run."""
    try:
        models = read_json(out_dir / SUMMARY_FILE).get("models")
    except AttributeError:
        return {}
    return models if isinstance(models, dict) else {}


@dataclass
class RunFolder:
    """results.jsonl read back (its records in input order: in memory, or read one at a time
    when loaded with stream=True), with summary.json (or what can be rebuilt without it)."""

    path: Path
    records: list[SampleRecord] | OrderedResults
    summary: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def load_run(path: Path, *, stream: bool = False) -> RunFolder:
    """Read a run folder. The per-metric summary is always recomputed from results.jsonl.
    `stream`: the records stay in the file (an index of them is read: `index_results`)."""
    path = Path(path)
    results = path / RESULTS_FILE
    if not results.is_file():
        raise UsageError(
            f"{path} is not a run folder: {RESULTS_FILE} not found "
            "(give the --out folder of `localeval run`)"
        )
    read = index_results(results) if stream else read_results(results)
    loaded = read_json(path / SUMMARY_FILE)
    summary: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
    if "settings" not in summary:  # no summary.json (killed hard): run.json still has them
        try:
            inputs = read_json(path / RUN_FILE)["inputs"]
            summary["settings"] = inputs if isinstance(inputs, dict) else {}
            summary.setdefault("localeval_version", summary["settings"].get("localeval_version"))
        except (KeyError, TypeError):
            pass
    records: list[SampleRecord] | OrderedResults
    if stream:
        spans = sorted((e.line, e.id, e.offset, e.length) for e in read.records)
        records = OrderedResults(results, [(offset, n, line) for line, _, offset, n in spans])
    else:
        records = sorted(read.records, key=lambda r: (r.line, r.id))
    summary["metrics"] = recompute_metrics(records, summary.get("metrics") or {})
    return RunFolder(path=path, records=records, summary=summary, notes=read.notes())
