"""A labelled run folder's summary.json and report: the corrected figures written beside the
judge's when the folder holds labels.jsonl (`localeval report DIR`, and `run` on finishing)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from localeval.errors import LabelsError
from localeval.labels.estimate import being_written, estimate_run
from localeval.labels.show import basis
from localeval.labels.store import LABELS_FILE
from localeval.results.runfiles import SUMMARY_FILE, read_json, write_json


def labels_summary(run_dir: Path) -> dict[str, Any] | None:
    """summary.json's `labels` for the run in `run_dir`: the estimates, each with the sentence
    saying what it rests on, or {"error": why} when labels.jsonl cannot be used; None without
    labels.jsonl."""
    if not (Path(run_dir) / LABELS_FILE).exists():
        return None
    try:
        data = estimate_run(Path(run_dir)).to_json()
    except LabelsError as exc:
        return {"labels": str(Path(run_dir) / LABELS_FILE), "error": str(exc)}
    for key, e in data["ppi"].items():
        e["basis"] = basis(key, e)
    return data


def attach_labels(run_dir: Path, log: Callable[[str], None] | None = None) -> dict[str, Any] | None:
    """Write summary.json's `labels` (or drop a stale one when labels.jsonl is gone); nothing
    while a run is writing the folder or when it has no summary.json. Returns what was
    written."""
    run_dir = Path(run_dir)
    summary = read_json(run_dir / SUMMARY_FILE)
    if not isinstance(summary, dict) or being_written(run_dir) is not None:
        return None
    data = labels_summary(run_dir)
    if data is None and "labels" not in summary:
        return None
    if data is None:
        summary.pop("labels", None)
    else:
        summary["labels"] = data
        if log is not None:
            for line in ([f"labels: {data['error']}"] if "error" in data
                         else [f"note: {n}" for n in data["notes"]]):
                log(line)
    write_json(run_dir / SUMMARY_FILE, summary)
    return data


def refresh(run_dir: Path, log: Callable[[str], None] | None = None) -> None:
    """After a run that finished in a folder holding labels.jsonl: summary.json's `labels`, then
    the report again with them."""
    if attach_labels(run_dir, log) is not None:
        from localeval.report import rerender

        rerender(Path(run_dir))
