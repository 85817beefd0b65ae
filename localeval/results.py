"""Per-sample records, results.jsonl (appended and flushed as samples finish), summary.json, the
run folder's fingerprint (run.json, for --resume) and reading a run folder back."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError

from localeval.errors import DatasetError, LocalevalError, UsageError

RESULTS_FILE = "results.jsonl"
SUMMARY_FILE = "summary.json"
RUN_FILE = "run.json"

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


class ResultsWriter:
    """Appends one JSON line per finished sample and flushes, so a crash loses nothing done."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 (closed by close())

    def write(self, record: SampleRecord) -> None:
        self._file.write(record.model_dump_json() + "\n")
        self._file.flush()
        os.fsync(self._file.fileno())

    def close(self) -> None:
        self._file.close()


def rewrite_in_order(path: Path, records: Iterable[SampleRecord]) -> None:
    """Replace results.jsonl atomically with the records in input order (deterministic file)."""
    tmp = path.with_suffix(".jsonl.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        for r in sorted(records, key=lambda r: r.line):
            f.write(r.model_dump_json() + "\n")
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def bootstrap_ci(
    values: list[float], *, n: int = 2000, seed: int = 0
) -> tuple[float, float] | None:
    """Percentile bootstrap 95% interval of the mean (fixed seed: same data → same interval).

    Given paired differences (b_i - a_i) it is the paired bootstrap interval of the mean
    difference: the pairs are resampled together.
    """
    if len(values) < 2:
        return None
    arr = np.asarray(values, dtype=np.float64)
    rng = np.random.default_rng(seed)
    means = arr[rng.integers(0, len(arr), size=(n, len(arr)))].mean(axis=1)
    lo, hi = np.percentile(means, [2.5, 97.5])
    return float(lo), float(hi)


def metric_summary(records: list[SampleRecord], owners: dict[str, str]) -> dict[str, Any]:
    """Per score key: mean, n scored, n unscored, n errors, n skipped and a 95% CI."""
    out: dict[str, Any] = {}
    for key, owner in owners.items():
        values = [r.scores[key] for r in records if r.scores.get(key) is not None]
        vals = [float(v) for v in values if v is not None]
        ci = bootstrap_ci(vals)
        out[key] = {
            "metric": owner,
            "mean": float(np.mean(vals)) if vals else None,
            "count": len(vals),
            "unscored": sum(1 for r in records if key in r.scores and r.scores[key] is None),
            "errors": sum(1 for r in records if owner in r.errors),
            "skipped": sum(1 for r in records if owner in r.skipped),
            "ci95": list(ci) if ci else None,
        }
    return out


def write_json(path: Path, data: Any) -> None:
    tmp = path.with_suffix(path.suffix + ".tmp")
    tmp.write_text(
        json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8"
    )
    os.replace(tmp, path)


# ---- reading results.jsonl back (resume, report, compare) ----------------------------------


@dataclass
class ReadResults:
    """What results.jsonl holds. `good_bytes`: length of the file up to its last complete line."""

    records: list[SampleRecord]
    bad_lines: list[int] = field(default_factory=list)
    incomplete_tail: bool = False
    good_bytes: int = 0

    def notes(self) -> list[str]:
        out = []
        if self.incomplete_tail:
            out.append(
                "the last line of results.jsonl was cut short (interrupted write); "
                "that sample will be redone"
            )
        mid = [n for n in self.bad_lines if not (self.incomplete_tail and n == self.bad_lines[-1])]
        if mid:
            out.append(
                f"results.jsonl line(s) {', '.join(map(str, mid[:10]))} are not valid "
                "records and were ignored"
            )
        return out


def read_results(path: Path) -> ReadResults:
    """Read results.jsonl tolerantly: an unreadable line is noted, never fatal.

    A last line without its newline (a write cut by a crash or power cut) is reported as an
    incomplete tail; `good_bytes` tells where to truncate before appending again. When an id
    occurs twice, the later record wins.
    """
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return ReadResults(records=[])
    except OSError as exc:
        raise DatasetError(f"cannot read {path}: {exc}") from None
    by_id: dict[str, SampleRecord] = {}
    bad: list[int] = []
    incomplete = False
    good = 0
    pos = 0
    lines = data.split(b"\n")
    for number, raw in enumerate(lines, start=1):
        last = number == len(lines)
        end = pos + len(raw) + (0 if last else 1)
        if raw.strip():
            try:
                record = SampleRecord.model_validate_json(raw)
            except (ValidationError, ValueError):
                bad.append(number)
                if last:
                    incomplete = True
                else:
                    good = end
            else:  # a valid last line without its newline is kept; prepare_append adds it
                good = end
                by_id.pop(record.id, None)
                by_id[record.id] = record
        elif not last:
            good = end
        pos = end
    return ReadResults(
        records=list(by_id.values()), bad_lines=bad, incomplete_tail=incomplete, good_bytes=good
    )


def prepare_append(path: Path, read: ReadResults) -> None:
    """Cut an incomplete last line off results.jsonl and end the file with a newline."""
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


def input_hash(sample: BaseModel) -> str:
    """A short, stable hash of a row's content (its line number excluded)."""
    payload = json.dumps(
        sample.model_dump(mode="json", exclude={"line"}),
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


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
    run_file = out_dir / RUN_FILE
    try:
        stored = json.loads(run_file.read_text(encoding="utf-8"))
        old = stored["inputs"]
        if not isinstance(old, dict):
            raise TypeError
    except FileNotFoundError:
        raise UsageError(
            f"cannot resume in {out_dir}: it has results.jsonl but no {RUN_FILE} "
            "(not made by this version of localeval); use a new --out"
        ) from None
    except (ValueError, KeyError, TypeError, OSError):
        raise UsageError(
            f"cannot resume in {out_dir}: {RUN_FILE} is unreadable; use a new --out "
            "(or --overwrite to start over)"
        ) from None
    if fingerprint_of(old) == fingerprint_of(inputs):
        return
    changed = []
    for key in sorted(set(old) | set(inputs)):
        if old.get(key) != inputs.get(key):
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


def write_run_file(out_dir: Path, inputs: Mapping[str, Any]) -> None:
    write_json(out_dir / RUN_FILE, {"fingerprint": fingerprint_of(inputs), "inputs": dict(inputs)})


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return text if len(text) <= 60 else text[:57] + "..."


# ---- a finished (or partial) run folder -------------------------------------------------------


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


def recompute_metrics(records: list[SampleRecord], stored: Mapping[str, Any]) -> dict[str, Any]:
    """metric_summary over records. The keys (and the metric owning each) of the stored summary
    come first, so a metric that errored everywhere keeps its line; then any other score key."""
    keys: dict[str, str] = {}
    for key, m in stored.items():
        owner = m.get("metric") if isinstance(m, Mapping) else None
        keys[key] = owner if isinstance(owner, str) else _owner(key)
    for r in records:
        for key in r.scores:
            keys.setdefault(key, _owner(key))
    return metric_summary(records, keys)


def _owner(key: str) -> str:
    """The metric of a score key (`metric`, `metric.sub`, `metric@k`), as the runner names it."""
    return key.split(".", 1)[0].split("@", 1)[0]


# ---- opening the output folder of a run (fresh, --resume or --overwrite) ----------------------


class RunInterrupted(LocalevalError):
    """Ctrl-C: the samples done so far are saved; `--resume` continues the run."""

    exit_code = 130

    def __init__(
        self, done: int, total: int, out_dir: Path | None, summary: dict[str, Any]
    ) -> None:
        self.done, self.total, self.out_dir, self.summary = done, total, out_dir, summary
        where = f" (saved in {out_dir})" if out_dir is not None else ""
        super().__init__(f"interrupted: {done} of {total} samples done{where}")


def previous_models(out_dir: Path) -> dict[str, Any]:
    """The models of the previous session (from summary.json), for a resumed run."""
    try:
        models = json.loads((out_dir / SUMMARY_FILE).read_text(encoding="utf-8")).get("models")
    except (OSError, ValueError, AttributeError):
        return {}
    return models if isinstance(models, dict) else {}


def open_run_folder(
    out_dir: Path,
    inputs: Mapping[str, Any],
    hashes: Mapping[str, str],
    *,
    resume: bool,
    overwrite: bool,
    log: Callable[[str], None] | None = None,
) -> list[SampleRecord]:
    """Make out_dir ready for appending; return the records a resumed run keeps.

    Without resume, a folder that already holds results is an error (results of hours of judging
    are never overwritten silently) unless overwrite is set. With resume, the folder's run.json
    must match `inputs`; records whose row is gone or changed (by input hash) are redone, and an
    incomplete last line (a crash mid-write) is cut off and its sample redone.
    """
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / RESULTS_FILE
    exists = path.is_file() and path.stat().st_size > 0
    if exists and not resume and not overwrite:
        n = len(read_results(path).records)
        raise UsageError(
            f"{out_dir} already holds results ({n} samples in {RESULTS_FILE}); add "
            "--resume to continue that run, --overwrite to start it over, or choose "
            "a new --out"
        )
    if not exists or overwrite:
        for name in (RESULTS_FILE, SUMMARY_FILE):
            (out_dir / name).unlink(missing_ok=True)
        write_run_file(out_dir, inputs)
        return []
    check_resumable(out_dir, inputs)
    read = read_results(path)
    prepare_append(path, read)
    for note in read.notes():
        if log:
            log(f"resume: {note}")
    kept = [r for r in read.records if r.id in hashes and r.input_hash == hashes[r.id]]
    changed = sum(1 for r in read.records if r.id in hashes and r.input_hash != hashes[r.id])
    gone = sum(1 for r in read.records if r.id not in hashes)
    if log:
        msg = f"resume: {len(kept)} of {len(hashes)} samples already done in {out_dir}"
        if changed:
            msg += f"; {changed} whose row changed will be redone"
        if gone:
            msg += f"; {gone} no longer in the dataset are dropped"
        log(msg)
    return kept
