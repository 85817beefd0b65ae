"""Per-sample records, results.jsonl (appended and flushed as samples finish) and summary.json."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field


class SampleRecord(BaseModel):
    """One line of results.jsonl."""

    id: str
    line: int = 0
    language: str = ""
    scores: dict[str, float | None] = Field(default_factory=dict)
    details: dict[str, Any] = Field(default_factory=dict)
    errors: dict[str, str] = Field(default_factory=dict, description="metric → why it failed")
    skipped: dict[str, str] = Field(default_factory=dict, description="metric → why it did not apply")


class ResultsWriter:
    """Appends one JSON line per finished sample and flushes, so a crash loses nothing done."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._file = open(path, "a", encoding="utf-8")

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
    os.replace(tmp, path)


def bootstrap_ci(values: list[float], *, n: int = 2000, seed: int = 0) -> tuple[float, float] | None:
    """Percentile bootstrap 95% interval of the mean (fixed seed: same data → same interval)."""
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
    tmp.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)
