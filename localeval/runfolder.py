"""The run folder (--out): its lock, its fingerprint (run.json, for --resume), opening it fresh,
resumed or overwritten, and reading a finished or partial run back (report, compare)."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from localeval.errors import OutputError, UsageError
from localeval.records import (
    RESULTS_FILE,
    ResultsWriter,
    SampleRecord,
    prepare_append,
    read_results,
    rewrite_in_order,
)
from localeval.stats import recompute_metrics

SUMMARY_FILE = "summary.json"
RUN_FILE = "run.json"
LOCK_FILE = ".localeval.lock"

# Settings that change speed or where things are stored, never a score: a run may be resumed
# with other values of these. Every other setting is part of the run's fingerprint.
NOT_IN_FINGERPRINT = frozenset(
    {
        "n_threads",
        "n_gpu_layers",
        "n_batch",
        "parallel",
        "cache",
        "no_cache",
        "embed_batch_size",
        "fake_answers",  # replaced by the file's sha256
    }
)


def write_json(path: Path, data: Any) -> None:
    """Write JSON atomically (a temporary file, then a rename); OutputError when it cannot."""
    tmp = path.with_suffix(path.suffix + ".tmp")
    try:
        tmp.write_text(
            json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
        )
        os.replace(tmp, path)
    except OSError as exc:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


# ---- the run's fingerprint (run.json) ----------------------------------------------------------


def fingerprint_inputs(
    settings: BaseModel, metric_names: list[str], prompt_hashes: Mapping[str, str], version: str
) -> dict[str, Any]:
    """Everything that can change a score: settings (bar speed/storage ones), metrics, prompts."""
    values = settings.model_dump(mode="json")
    inputs = {k: v for k, v in sorted(values.items()) if k not in NOT_IN_FINGERPRINT}
    fake = values.get("fake_answers")
    if fake:
        try:
            inputs["fake_answers_sha256"] = hashlib.sha256(Path(fake).read_bytes()).hexdigest()
        except OSError:
            inputs["fake_answers_sha256"] = None
    inputs["metrics_run"] = list(metric_names)
    inputs["prompts"] = dict(sorted(prompt_hashes.items()))
    inputs["localeval_version"] = version
    return inputs


def fingerprint_of(inputs: Mapping[str, Any]) -> str:
    text = json.dumps(inputs, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def check_resumable(out_dir: Path, inputs: Mapping[str, Any]) -> None:
    """Refuse to mix results made with other settings or prompts into out_dir."""
    try:
        old = json.loads((out_dir / RUN_FILE).read_text(encoding="utf-8"))["inputs"]
        if not isinstance(old, dict):
            raise TypeError
    except FileNotFoundError:
        raise UsageError(
            f"cannot resume in {out_dir}: it has {RESULTS_FILE} but no {RUN_FILE} "
            "(not made by this version of localeval); use a new --out"
        ) from None
    except (ValueError, KeyError, TypeError, OSError):
        raise UsageError(
            f"cannot resume in {out_dir}: {RUN_FILE} is unreadable (not the JSON localeval "
            "wrote); use a new --out (or --overwrite to start over)"
        ) from None
    if fingerprint_of(old) == fingerprint_of(inputs):
        return
    changed = []
    for key in sorted(set(old) | set(inputs)):
        if old.get(key) == inputs.get(key):
            continue
        if key == "prompts":
            a, b = old.get(key) or {}, inputs.get(key) or {}
            names = sorted(n for n in set(a) & set(b) if a[n] != b[n])
            if names:  # templates added or dropped follow from metrics_run
                more = f" and {len(names) - 4} more" if len(names) > 4 else ""
                changed.append("prompt templates changed: " + ", ".join(names[:4]) + more)
        else:
            changed.append(f"{key}: {_short(old.get(key))} then, {_short(inputs.get(key))} now")
    raise UsageError(
        f"cannot resume in {out_dir}: its results were made with other settings "
        f"({'; '.join(changed)}). Resume with the same settings, or use a new --out "
        "(or --overwrite to start over)"
    )


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


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
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as exc:
        raise OutputError(f"cannot write in --out {out_dir}: {exc.strerror or exc}") from None
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

    `previous` holds the records a resumed run keeps (their rows are unchanged).
    """

    path: Path
    previous: list[SampleRecord]
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
    ) -> OutputFolder:
        """Without resume, a folder that already holds results is an error (results of hours of
        judging are never overwritten silently) unless overwrite is set. With resume, run.json
        must match `inputs`, and every finished result must belong to a row of the dataset
        (a resume never deletes a result); a row whose content changed is redone, an incomplete
        last line (a crash mid-write) is cut off and its sample redone."""
        _make_dir(out_dir)
        folder = cls(path=out_dir, previous=[], _lock_fd=_lock(out_dir))
        try:
            folder.previous = folder._prepare(inputs, hashes, resume, overwrite, log)
            folder._writer = ResultsWriter(out_dir / RESULTS_FILE)
        except BaseException:
            folder.close()
            raise
        return folder

    def _prepare(
        self,
        inputs: Mapping[str, Any],
        hashes: Mapping[str, str],
        resume: bool,
        overwrite: bool,
        log: Callable[[str], None] | None,
    ) -> list[SampleRecord]:
        path = self.path / RESULTS_FILE
        exists = path.is_file() and path.stat().st_size > 0
        if exists and not resume and not overwrite:
            n = len(read_results(path).records)
            raise UsageError(
                f"{self.path} already holds results ({n} samples in {RESULTS_FILE}); add "
                "--resume to continue that run, --overwrite to start it over, or choose "
                "a new --out"
            )
        if not exists or overwrite:
            for name in (RESULTS_FILE, SUMMARY_FILE):
                with contextlib.suppress(FileNotFoundError):
                    (self.path / name).unlink()
            write_json(self.path / RUN_FILE, {"fingerprint": fingerprint_of(inputs),
                                              "inputs": dict(inputs)})
            return []
        check_resumable(self.path, inputs)
        read = read_results(path)
        gone = [r.id for r in read.records if r.id not in hashes]
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
        kept = [r for r in read.records if r.input_hash == hashes[r.id]]
        changed = len(read.records) - len(kept)
        if log:
            msg = f"resume: {len(kept)} of {len(hashes)} samples already done in {self.path}"
            if changed:
                msg += f"; {changed} whose row changed will be redone"
            log(msg)
        return kept

    def write(self, record: SampleRecord) -> None:
        """Append one finished sample to results.jsonl (flushed to disk)."""
        if self._writer is not None:
            self._writer.write(record)

    def finish(self, lines: Mapping[str, int]) -> list[SampleRecord]:
        """Stop appending; rewrite results.jsonl in input order; return every record it holds."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        return rewrite_in_order(self.path / RESULTS_FILE, lines)

    def close(self) -> None:
        """Close the results file and release the lock (idempotent)."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None


def previous_models(out_dir: Path) -> dict[str, Any]:
    """The models of the previous session (from summary.json), for a resumed run."""
    try:
        models = json.loads((out_dir / SUMMARY_FILE).read_text(encoding="utf-8")).get("models")
    except (OSError, ValueError, AttributeError):
        return {}
    return models if isinstance(models, dict) else {}


# ---- reading a finished (or partial) run folder ------------------------------------------------


@dataclass
class RunFolder:
    """results.jsonl read back, with summary.json (or what can be rebuilt without it)."""

    path: Path
    records: list[SampleRecord]
    summary: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def load_run(path: Path) -> RunFolder:
    """Read a run folder. The per-metric summary is always recomputed from results.jsonl."""
    path = Path(path)
    results = path / RESULTS_FILE
    if not results.is_file():
        raise UsageError(
            f"{path} is not a run folder: {RESULTS_FILE} not found "
            "(give the --out folder of `localeval run`)"
        )
    read = read_results(results)
    summary: dict[str, Any] = {}
    try:
        loaded = json.loads((path / SUMMARY_FILE).read_text(encoding="utf-8"))
        if isinstance(loaded, dict):
            summary = loaded
    except (OSError, ValueError):
        pass
    if "settings" not in summary:  # no summary.json (killed hard): run.json still has them
        try:
            inputs = json.loads((path / RUN_FILE).read_text(encoding="utf-8"))["inputs"]
            summary["settings"] = inputs if isinstance(inputs, dict) else {}
            summary.setdefault("localeval_version", summary["settings"].get("localeval_version"))
        except (OSError, ValueError, KeyError, TypeError):
            pass
    records = sorted(read.records, key=lambda r: (r.line, r.id))
    summary["metrics"] = recompute_metrics(records, summary.get("metrics") or {})
    return RunFolder(path=path, records=records, summary=summary, notes=read.notes())
