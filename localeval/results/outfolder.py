"""The folder a run writes (--out): its lock, opening it fresh, resumed or overwritten, the
records appended, the finish. run.json and the other files: `runfiles`; reading a run folder
back: `loadrun`."""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.errors import OutputError, UsageError
from localeval.results.ordered import Entry, OrderedResults, index_results, rewrite_in_order
from localeval.results.records import (
    RESULTS_FILE,
    ResultsWriter,
    SampleRecord,
    link_error,
    open_nofollow,
    prepare_append,
)
from localeval.results.runfiles import (
    LOCK_FILE,
    RUN_FILE,
    SUMMARY_FILE,
    check_resumable,
    classify,
    fingerprint_of,
    read_json,
    recover_run_file,
    unrecoverable,
    write_run_file,
)

# ---- an open --out folder ----------------------------------------------------------------------


def _lock(out_dir: Path) -> int | None:
    """Hold an exclusive lock on out_dir for this process (released when it exits, even killed).
    None where the platform has no flock; UsageError when another run holds it."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows: no lock
        return None
    path = out_dir / LOCK_FILE
    try:
        fd = open_nofollow(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise link_error(path) from None
        raise OutputError(f"cannot write in --out {out_dir}: {exc.strerror or exc}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device planted as the lock
        os.close(fd)
        raise UsageError(f"{path} is not a regular file; remove it or choose another --out")
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        holder = os.read(fd, 32).decode("ascii", "replace").strip() or "?"
        os.close(fd)
        raise UsageError(
            f"{out_dir} is in use by another localeval run (pid {holder}); wait for it to "
            "finish, or choose another --out"
        ) from None
    os.ftruncate(fd, 0)
    os.write(fd, str(os.getpid()).encode("ascii"))
    return fd


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
