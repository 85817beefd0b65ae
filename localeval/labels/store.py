"""The labels file: human labels of a run's samples and claims, one JSON object a line.

A row labels one sample's score for one metric (`claim` absent or null) or one claim the judge
judged for that metric (`claim` = the claim's index in the sample's details). Fields:

- `id` (string or number): the sample's id in the run;
- `metric` (string): the score the label is for, a metric ("faithfulness") or a sub-score
  ("faithfulness.weighted"); an old name ("faithfulness.soft") is read as the new one, with a note;
- `claim` (integer ≥ 0 or null): the claim's index, null for a sample-level label;
- `turn` (integer ≥ 1 or null): a conversation's assistant turn the label judges (its number in
  `details.turns`), with `turn_text` (that turn's reply); null: the whole sample. A turn's
  claim index is in the turn's own details;
- `label` (number in [0, 1] or null): 1 = supported / right, 0 = not; null = "unsure" (kept so a
  labelling session resumes, never used by an estimate);
- `class` (string, a class label only): the claim's diagnosis class, for the label metrics
  `diagnosis.answer_claims` and `diagnosis.truth_claims` (labels/classes.py), with `label` 1;
  `label` null and no class = unsure;
- `order` ("random", "informative" or null): how the sample was drawn. Only "random" labels (a
  uniform random draw) enter a corrected estimate; a row that names no order counts as random
  (whoever wrote it vouches for that); "informative" labels are for fitting (τ, a head);
- `input_hash` (the sample's, from results.jsonl) and, for a claim label, `statement` (the
  claim's text): what the label judged (`bound`); a row is used only when they match the run, or
  when it says `unbound`: true;
- `who`, `when` (ISO 8601), `note`, `seed` (the random order's seed), `run` (the run's fingerprint;
  a row naming another run's fingerprint is refused): optional;
- `client_id` (optional): the id the labelling page gave the mark when it was made, once per
  mark; a mark sent again (its first request timed out but was written) is not appended again.

The file is append-only: each mark is one line appended and fsynced (`runfiles.append_line`), so
killing the writer loses nothing; the later usable row for the same (id, metric, claim) wins.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from localeval.errors import first_error
from localeval.names import current_key, is_old, renamed_note

LABELS_FILE = "labels.jsonl"
ORDERS = ("random", "informative")
CLIENT_ID_MAX = 64

Key = tuple[str, str, int | None]


class Label(BaseModel):
    """One human label, as one line of the labels file."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="the sample's id in the run")
    metric: str = Field(min_length=1, description="the metric the label is for")
    claim: int | None = Field(default=None, ge=0, description="claim index; null = the sample")
    turn: int | None = Field(default=None, ge=1, description="a conversation's assistant turn "
                             "(its number in details.turns); null = the whole sample")
    label: float | None = Field(description="1 supported/right, 0 not, null unsure")
    order: Literal["random", "informative"] | None = Field(
        default=None, description="how the sample was drawn; null counts as random")
    who: str | None = None
    when: str | None = None
    note: str | None = None
    seed: int | None = None
    run: str | None = Field(default=None, description="the run's fingerprint")
    input_hash: str | None = Field(default=None, description="the judged sample's input_hash")
    statement: str | None = Field(default=None, description="the judged claim's text")
    turn_text: str | None = Field(default=None, description="the judged turn's reply")
    unbound: bool = Field(default=False, description="true: used unchecked (its writer vouches "
                          "that it judges the sample as the run holds it now)")
    client_id: str | None = Field(default=None, min_length=1, max_length=CLIENT_ID_MAX,
                                  description="the page's id of the mark, made once per mark")
    klass: str | None = Field(default=None, alias="class",
                              description="a class label: the claim's diagnosis class")

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

    @model_validator(mode="after")
    def _class_label(self) -> Label:
        from localeval.labels.classes import CLASSES

        allowed = CLASSES.get(self.metric)
        if allowed is None:
            if self.klass is not None:
                raise ValueError(f"class: only a class label has one (metric "
                                 f"{' or '.join(CLASSES)}), not a label of {self.metric}")
            return self
        if self.claim is None:
            raise ValueError(f"claim: a label of {self.metric} is a claim's class: give the "
                             "claim's index")
        if self.klass is None and self.label is not None:
            raise ValueError(f"class: a label of {self.metric} names the claim's class "
                             f"({', '.join(allowed)}), with label 1 (label null: unsure)")
        if self.klass is not None and self.klass not in allowed:
            raise ValueError(f"class: {self.klass!r} is no class of {self.metric}; one of "
                             f"{', '.join(allowed)}")
        if self.klass is not None and self.label != 1:
            raise ValueError("label: a class label says 1 (the claim is of its class), or null "
                             "without a class (unsure)")
        return self

    @property
    def unit(self) -> str:
        """The id of what it labels: the sample's, or its turn's (`<id>#turn<n>`)."""
        from localeval.data.conversation import turn_id

        return self.id if self.turn is None else turn_id(self.id, self.turn)

    @property
    def key(self) -> Key:
        return (self.unit, self.metric, self.claim)

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
    dropped: dict[str, int] = field(default_factory=dict)  # why (bound.WHY) → rows left out
    unbound: int = 0  # rows used unchecked by their writer's word
    renamed: dict[str, int] = field(default_factory=dict)  # old score key → rows naming it
    client_ids: set[str] = field(default_factory=set)  # of every valid row, used or not

    def notes(self, path: Path) -> list[str]:
        """What a reader of the estimate should be told once: duplicates, unordered rows, rows
        left out for judging other content, rows used unbound."""
        out = []
        if self.duplicates:
            out.append(f"{path}: {self.duplicates} label(s) given again later; the later one wins")
        if self.unordered:
            out.append(f"{path}: {self.unordered} label(s) name no order; they count as drawn "
                       "uniformly at random (whoever wrote them vouches for that)")
        out += [f"{renamed_note(old, path.name)} ({n} label(s))"
                for old, n in self.renamed.items()]
        return out + self.binding_notes(path)

    def binding_notes(self, path: Path) -> list[str]:
        """The rows left out for judging other content, and the rows used unbound."""
        from localeval.labels.bound import WHY

        out = [f"{path}: {n} label(s) {WHY[why]}" for why, n in self.dropped.items()]
        if self.unbound:
            out.append(f"{path}: {self.unbound} label(s) say unbound: they are used unchecked, "
                       "as labels of the samples as the run holds them now (whoever wrote them "
                       "vouches for that)")
        return out

    @property
    def n_dropped(self) -> int:
        return sum(self.dropped.values())


def read_labels(path: Path, *, fingerprint: str | None = None,
                check: Callable[[Label], str | None] | None = None) -> LabelsRead:
    """Every valid row of `path`, the later winning; a bad row is one problem line naming the
    file, the line and what to do, and the other rows still count. `check` (bound.checker):
    a row it gives a reason for judged other content and is counted in `dropped`, never used.
    OSError when unreadable."""
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
            if label.client_id is not None:
                read.client_ids.add(label.client_id)
            if is_old(label.metric):
                read.renamed[label.metric] = read.renamed.get(label.metric, 0) + 1
                label = label.model_copy(update={"metric": current_key(label.metric)})
            if fingerprint and label.run and label.run != fingerprint:
                read.problems.append(f"{where}: labels a run with another fingerprint "
                                     f"({label.run[:12]}…); label this run, or point at the run "
                                     "the labels were made for")
                continue
            why = check(label) if check is not None else None
            if why is not None:
                read.dropped[why] = read.dropped.get(why, 0) + 1
                continue
            read.unbound += label.unbound
            if label.key in read.labels:
                read.duplicates += 1
            if label.order is None:
                read.unordered += 1
            read.labels[label.key] = label
    return read


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def append_label(path: Path, label: Label) -> None:
    """Append one row durably (`runfiles.append_line`: a newline first when the file does not
    end in one, every byte written, fsynced; OSError when not). `label` is always written
    (null = unsure is a value, and the field is required)."""
    from localeval.results.runfiles import append_line

    row = label.model_dump(mode="json", exclude_none=True, by_alias=True)
    row["label"] = label.label
    if not label.unbound:
        row.pop("unbound", None)
    append_line(path, (json.dumps(row, ensure_ascii=False) + "\n").encode("utf-8"))
