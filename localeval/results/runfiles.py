"""The files of a run folder and how they are written: every one opened without following a
link, replaced durably (an fsynced temporary file renamed); run.json, the run's fingerprint (how
a folder is known as a localeval run, checked by --resume). results.jsonl's records: `records`;
what an --out folder is, opening it and reading it back: `folder`."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import secrets
import stat
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import BaseModel

from localeval.errors import OutputError, UsageError

SUMMARY_FILE = "summary.json"
RUN_FILE = "run.json"
WRITTEN_BY = "localeval"  # run.json's "written_by": how a folder is known as a localeval run
NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

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


def link_error(path: Path) -> OutputError:
    return OutputError(
        f"{path} is a symbolic link; localeval never writes through a link in a run folder — "
        "remove the link or choose another --out"
    )


def open_nofollow(path: Path, flags: int, mode: int = 0o644) -> int:
    """os.open that refuses a symbolic link as the last component (OSError ELOOP)."""
    return os.open(path, flags | NOFOLLOW | getattr(os, "O_CLOEXEC", 0), mode)


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file in `folder` durable (no-op where a folder cannot be fsynced)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.ENOTSUP, errno.EBADF):
            raise
    finally:
        os.close(fd)


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of `data` at the end of `fd` (os.write may write fewer: the rest is
    written again; one that writes nothing is ENOSPC). On failure the file is cut back to its
    length before, so it never ends in part of `data`; the OSError is raised."""
    start = os.lseek(fd, 0, os.SEEK_END)
    rest = memoryview(data)
    try:
        while rest:
            n = os.write(fd, rest)
            if n <= 0:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
            rest = rest[n:]
    except OSError:
        with contextlib.suppress(OSError):
            os.ftruncate(fd, start)
        raise


def append_line(path: Path, line: bytes) -> None:
    """Append one line durably (a labels or decisions file): opened without following a link
    (O_APPEND), a newline first when the file does not end in one (a hand-written last row),
    every byte written (`write_all`), then fsynced. OSError when any of it fails; what the
    file held before is left as it was."""
    fd = open_nofollow(path, os.O_RDWR | os.O_APPEND | os.O_CREAT)
    try:
        size = os.fstat(fd).st_size
        if size and os.pread(fd, 1, size - 1) != b"\n":
            line = b"\n" + line
        write_all(fd, line if line.endswith(b"\n") else line + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)


def write_atomic(path: Path, chunks: Iterable[bytes]) -> None:
    """Replace `path` by `chunks` durably: a new temporary file (random name, O_EXCL, no link
    followed) written and fsynced, renamed over `path`, then the folder fsynced. On any failure
    the temporary file is removed and `path` is as it was; OSError is raised."""
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
    fd = open_nofollow(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
    try:
        try:
            for chunk in chunks:
                write_all(fd, chunk)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    fsync_dir(path.parent)


def write_text(path: Path, text: str) -> None:
    """Replace a file durably and atomically (fsynced temporary file with a random name, renamed,
    folder fsynced; no link followed); OutputError when it cannot, the old file left intact."""
    try:
        write_atomic(path, [text.encode("utf-8")])
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


def write_json(path: Path, data: Any) -> None:
    """Write JSON as write_text does."""
    write_text(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")


def open_regular(path: Path) -> BinaryIO:
    """`path` opened for reading: no link followed, and only a regular file (a FIFO or a device
    is OSError at once, never a read that waits)."""
    fd = open_nofollow(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise OSError(errno.EINVAL, "not a regular file", str(path))
    return os.fdopen(fd, "rb")


def read_json(path: Path) -> Any:
    """A JSON file's content (no link followed, regular files only); None when absent,
    unreadable, malformed or nested too deeply."""
    try:
        with open_regular(path) as f:
            return json.loads(f.read())
    except (OSError, ValueError, RecursionError):
        return None


# ---- the run's fingerprint (run.json) ----------------------------------------------------------


def fingerprint_inputs(
    settings: BaseModel, metric_names: list[str], prompt_hashes: Mapping[str, str], version: str,
    step_thresholds: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[str, Any]:
    """Everything that can change a score: settings (bar speed/storage ones), metrics, prompts,
    the verifier head the run takes (head_sha256), the fitted τ of a step that has its own
    (metrics/claims/verdicts.step_thresholds; absent when there is none)."""
    values = settings.model_dump(mode="json")
    inputs = {k: v for k, v in sorted(values.items()) if k not in NOT_IN_FINGERPRINT}
    fake = values.get("fake_answers")
    if fake:
        try:
            inputs["fake_answers_sha256"] = hashlib.sha256(Path(fake).read_bytes()).hexdigest()
        except OSError:
            inputs["fake_answers_sha256"] = None
    inputs["verifier_sha256"] = head_sha256(values.get("verifier"))
    if values.get("shield") == "meaning":
        from localeval.metrics.shield_meaning import head_sha256 as shield_head_sha256

        inputs["shield_head_sha256"] = shield_head_sha256()
    if step_thresholds:
        inputs["step_thresholds"] = {k: dict(v) for k, v in sorted(step_thresholds.items())}
    inputs["metrics_run"] = list(metric_names)
    inputs["prompts"] = dict(sorted(prompt_hashes.items()))
    inputs["localeval_version"] = version
    return inputs


NO_HEAD_SHA256 = hashlib.sha256().hexdigest()
"""What run.json holds of `--verifier auto`: the hash of no head's bytes (no head is packaged;
when heads were, none was adopted, so runs made then hold the same and still resume)."""


def head_sha256(choice: str | None) -> str | None:
    """The `--verifier` choice as the fingerprint holds it: None with `none`, NO_HEAD_SHA256
    with `auto`, else the sha256 of the head file's bytes (None when it cannot be read): a head
    changed under the same name changes the fingerprint."""
    if not choice or choice == "none":
        return None
    if choice == "auto":
        return NO_HEAD_SHA256
    try:
        return hashlib.sha256(Path(choice).read_bytes()).hexdigest()
    except OSError:
        return None


def fingerprint_of(inputs: Mapping[str, Any]) -> str:
    text = json.dumps(inputs, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_inputs(out_dir: Path) -> dict[str, Any] | None:
    """run.json's inputs when it is one localeval wrote (its fingerprint is its inputs' hash)."""
    data = read_json(out_dir / RUN_FILE)
    inputs = data.get("inputs") if isinstance(data, dict) else None
    if isinstance(inputs, dict) and data.get("fingerprint") == fingerprint_of(inputs):
        return inputs
    return None


def check_resumable(out_dir: Path, inputs: Mapping[str, Any]) -> None:
    """Refuse to mix results made with other settings or prompts into out_dir."""
    old = read_inputs(out_dir)
    if old is None:
        raise UsageError(f"cannot resume in {out_dir}: {RUN_FILE} is missing or unreadable")
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


def recover_run_file(out_dir: Path, inputs: Mapping[str, Any]) -> bool:
    """Rebuild a missing or unreadable run.json when summary.json (written by an earlier session)
    carries the same fingerprint: the results there were made with these settings."""
    summary = read_json(out_dir / SUMMARY_FILE)
    if isinstance(summary, dict) and summary.get("run_fingerprint") == fingerprint_of(inputs):
        write_run_file(out_dir, inputs)
        return True
    return False


def write_run_file(out_dir: Path, inputs: Mapping[str, Any]) -> None:
    write_json(out_dir / RUN_FILE, {"written_by": WRITTEN_BY, "fingerprint": fingerprint_of(inputs),
                                    "inputs": dict(inputs)})


def unrecoverable(out_dir: Path, n: int) -> UsageError:
    """Why a resume cannot check the settings of a run whose run.json is lost: one line."""
    what = f"has no {RUN_FILE}" if not (out_dir / RUN_FILE).exists() else (
        f"has a {RUN_FILE} that is unreadable")
    summary = read_json(out_dir / SUMMARY_FILE)
    why = (
        f"its {SUMMARY_FILE} shows other settings"
        if isinstance(summary, dict) and summary.get("run_fingerprint")
        else f"no {SUMMARY_FILE} records them"
    )
    return UsageError(
        f"cannot resume in {out_dir}: it {what}, so the settings of its {n} finished samples "
        f"cannot be checked ({why}); resume with the settings they were made with, or start "
        f"again with a new --out (nothing in {out_dir} is deleted; `localeval report {out_dir}` "
        "still reads them)"
    )
