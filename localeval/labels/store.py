"""The labels file: human labels of a run's samples and claims, one JSON object a line.

A row labels one sample's score for one metric (`claim` absent or null) or one claim the judge
judged for that metric (`claim` = the claim's index in the sample's details). Fields:

- `id` (string or number): the sample's id in the run;
- `metric` (string): the metric the label is for, e.g. "faithfulness";
- `claim` (integer ≥ 0 or null): the claim's index, null for a sample-level label;
- `label` (number in [0, 1] or null): 1 = supported / right, 0 = not; null = "unsure" (kept so a
  labelling session resumes, never used by an estimate);
- `order` ("random", "informative" or null): how the sample was drawn. Only "random" labels (a
  uniform random draw) enter a corrected estimate; a row that names no order counts as random
  (whoever wrote it vouches for that); "informative" labels are for fitting (τ, a head);
- `who`, `when` (ISO 8601), `note`, `seed` (the random order's seed), `run` (the run's fingerprint;
  a row naming another run's fingerprint is refused): optional.

The file is append-only: each mark is one line written with one write and fsynced, so killing the
writer loses nothing; the later row for the same (id, metric, claim) wins.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from localeval.errors import first_error

LABELS_FILE = "labels.jsonl"
ORDERS = ("random", "informative")

Key = tuple[str, str, int | None]


class Label(BaseModel):
    """One human label, as one line of the labels file."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="the sample's id in the run")
    metric: str = Field(min_length=1, description="the metric the label is for")
    claim: int | None = Field(default=None, ge=0, description="claim index; null = the sample")
    label: float | None = Field(description="1 supported/right, 0 not, null unsure")
    order: Literal["random", "informative"] | None = Field(
        default=None, description="how the sample was drawn; null counts as random")
    who: str | None = None
    when: str | None = None
    note: str | None = None
    seed: int | None = None
    run: str | None = Field(default=None, description="the run's fingerprint")

    @field_validator("id", mode="before")
    @classmethod
    def _id_text(cls, value: object) -> object:
        if isinstance(value, bool):
            return value  # refused below: true is not an id
        return str(value) if isinstance(value, int) else value

    @field_validator("label")
    @classmethod
    def _in_unit_interval(cls, value: float | None) -> float | None:
        if value is not None and not (math.isfinite(value) and 0.0 <= value <= 1.0):
            raise ValueError("must be a number in [0, 1] (or null for unsure)")
        return value

    @property
    def key(self) -> Key:
        return (self.id, self.metric, self.claim)

    @property
    def random(self) -> bool:
        """Drawn uniformly at random (or vouched for as such by naming no order)."""
        return self.order != "informative"


@dataclass
class LabelsRead:
    """A labels file read: the latest label per key, and one line per problem."""

    labels: dict[Key, Label] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    duplicates: int = 0  # rows replaced by a later row for the same key
    unordered: int = 0  # rows that name no order (counted as random)

    def notes(self, path: Path) -> list[str]:
        """What a reader of the estimate should be told once: duplicates, unordered rows."""
        out = []
        if self.duplicates:
            out.append(f"{path}: {self.duplicates} label(s) given again later; the later one wins")
        if self.unordered:
            out.append(f"{path}: {self.unordered} label(s) name no order; they count as drawn "
                       "uniformly at random (whoever wrote them vouches for that)")
        return out


def read_labels(path: Path, *, fingerprint: str | None = None) -> LabelsRead:
    """Every valid row of `path`, the later winning; a bad row is one problem line naming the
    file, the line and what to do, and the other rows still count. OSError when unreadable."""
    read = LabelsRead()
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            where = f"{path}:{n}"
            try:
                raw = json.loads(line)
            except ValueError:
                read.problems.append(f"{where}: not a JSON object (a line torn by a crash, or "
                                     "not JSONL); fix or delete the line")
                continue
            if not isinstance(raw, dict):
                read.problems.append(f"{where}: not a JSON object; each line labels one sample "
                                     'or claim, e.g. {"id": "s1", "metric": "faithfulness", '
                                     '"label": 1}')
                continue
            try:
                label = Label.model_validate(raw)
            except ValidationError as exc:
                loc, msg = first_error(exc, "row")
                read.problems.append(f"{where}: {loc}: {msg}")
                continue
            if fingerprint and label.run and label.run != fingerprint:
                read.problems.append(f"{where}: labels a run with another fingerprint "
                                     f"({label.run[:12]}…); label this run, or point at the run "
                                     "the labels were made for")
                continue
            if label.key in read.labels:
                read.duplicates += 1
            if label.order is None:
                read.unordered += 1
            read.labels[label.key] = label
    return read


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def append_label(path: Path, label: Label) -> None:
    """Append one row durably: one write of the whole line (O_APPEND), then fsync. `label` is
    always written (null = unsure is a value, and the field is required)."""
    row = label.model_dump(mode="json", exclude_none=True)
    row["label"] = label.label
    line = (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8")
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
                 | getattr(os, "O_NOFOLLOW", 0), 0o644)
    try:
        os.write(fd, line)
        os.fsync(fd)
    finally:
        os.close(fd)
