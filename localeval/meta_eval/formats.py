"""The labelled data meta-eval reads: preference pairs, or rows with a human label or score.

Pairs (JSONL, one object a line): `pair_id`, `a` and `b` (each a normal localeval row),
`preferred` ("a", "b" or "tie"), optional `language` (the group it is reported under) and
`meta` (anything; shown beside the pair in the report). Labelled rows: a normal localeval row
plus `label` (0 or 1: binary) and/or `human_score` (a number: graded), optional `language`.
A line that cannot be used becomes a RowProblem naming its line; the other lines still load.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from localeval.data.dataset import RowProblem, not_a_file, to_sample, value_problem
from localeval.errors import DatasetError, first_error
from localeval.safe import unicode_safe

PAIR_FIELDS = frozenset({"pair_id", "a", "b", "preferred"})
LABEL_FIELDS = ("label", "human_score", "language")


class Pair(BaseModel):
    """Two rows and the one people prefer ("tie": no preference; counted, never judged)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    pair_id: str
    a: dict[str, Any]
    b: dict[str, Any]
    preferred: Literal["a", "b", "tie"]
    language: str | None = None
    meta: dict[str, Any] | None = None
    line: int = Field(0, description="1-based line of the input file")

    @field_validator("pair_id", mode="before")
    @classmethod
    def _id_as_string(cls, v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)
        return v

    def row_id(self, side: str) -> str:
        """The id of side "a" or "b" in the run folder."""
        return f"{self.pair_id}/{side}"


class LabelledRow(BaseModel):
    """A normal localeval row with a human `label` (0/1) and/or `human_score`."""

    model_config = ConfigDict(frozen=True)

    id: str
    row: dict[str, Any]
    label: Literal[0, 1] | None = None
    human_score: float | None = None
    language: str | None = None
    line: int = 0


class LabelledData(BaseModel):
    kind: Literal["pairs", "rows"]
    pairs: list[Pair] = Field(default_factory=list)
    rows: list[LabelledRow] = Field(default_factory=list)
    problems: list[RowProblem] = Field(default_factory=list)
    source: str


def _read_objects(path: Path) -> list[tuple[int, Any]]:
    """(line, parsed JSON) per non-blank JSONL line, or (i, item) of a JSON list."""
    why = not_a_file(path)
    if why:  # a FIFO would be waited on forever
        raise DatasetError(f"labelled data {path} {why}; give a .jsonl or .json file")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except FileNotFoundError:
        raise DatasetError(f"labelled data {path} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DatasetError(f"labelled data {path} cannot be read: {exc}") from None
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except ValueError as exc:
            raise DatasetError(f"{path}: malformed JSON ({exc})") from None
        except RecursionError:
            raise DatasetError(f"{path}: JSON nested too deeply to read") from None
        if not isinstance(data, list):
            raise DatasetError(f"{path}: expected a JSON list of pairs or labelled rows")
        return list(enumerate(data, start=1))
    out: list[tuple[int, Any]] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            out.append((line_no, json.loads(line)))
        except json.JSONDecodeError as exc:
            message = f"malformed JSON ({exc.msg} at column {exc.colno}); fix or remove the line"
            out.append((line_no, RowProblem(line=line_no, message=message)))
        except (ValueError, RecursionError) as exc:
            message = f"unreadable JSON ({type(exc).__name__}); fix or remove the line"
            out.append((line_no, RowProblem(line=line_no, message=message)))
    return out


def _check_row(raw: Any, line: int, what: str) -> dict[str, Any]:
    """Validate a localeval row as `run` would; the error names the side and the line."""
    try:
        to_sample(raw, line)
    except ValueError as exc:
        raise ValueError(f"{what}: {exc}") from None
    return dict(raw)


def _own_fields(raw: Mapping[str, Any], names: tuple[str, ...]) -> None:
    """The file's own fields (not a localeval row's) checked as the loader checks a row's:
    valid Unicode (no lone surrogate), not absurdly nested, storable."""
    for name in names:
        problem = value_problem(name, raw.get(name))
        if problem:
            raise ValueError(f"field {name!r} {problem}")


def _pair(raw: Mapping[str, Any], line: int) -> Pair:
    _own_fields(raw, ("pair_id", "language", "meta", "preferred"))
    try:
        pair = Pair.model_validate({**raw, "line": line})
    except ValidationError as exc:
        loc, msg = first_error(exc, "pair")
        raise ValueError(f"field {loc!r}: {msg}") from None
    for side in ("a", "b"):
        row = {k: v for k, v in getattr(pair, side).items() if k != "id"}
        _check_row(row, line, f"row {side!r}")
    return pair


def _labelled(raw: Mapping[str, Any], line: int) -> LabelledRow:
    label, score = raw.get("label"), raw.get("human_score")
    if label is None and score is None:
        raise ValueError("needs 'label' (0 or 1) or 'human_score' (a number)")
    if label is not None:
        if isinstance(label, bool):
            label = int(label)
        if label not in (0, 1):  # 1.0 is 1; 0.5, "1" are not labels
            raise ValueError(f"field 'label' must be 0 or 1, got {label!r}")
        label = int(label)
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise ValueError(f"field 'human_score' must be a number, got {score!r}")
        if not math.isfinite(score):
            raise ValueError("field 'human_score' must be a finite number")
    language = raw.get("language")
    if language is not None and not isinstance(language, str):
        raise ValueError("field 'language' must be a string")
    _own_fields(raw, ("language",))
    row = {k: v for k, v in raw.items() if k not in LABEL_FIELDS}
    sample = to_sample(row, line)
    return LabelledRow(
        id=sample.id,
        row={**row, "id": sample.id},
        label=label,
        human_score=score,
        language=language,
        line=line,
    )


def load(path: Path) -> LabelledData:
    """Read pairs or labelled rows (the kind is decided by the first usable line)."""
    path = Path(path)
    kind: Literal["pairs", "rows"] | None = None
    pairs: list[Pair] = []
    rows: list[LabelledRow] = []
    problems: list[RowProblem] = []
    seen: dict[str, int] = {}
    for line, raw in _read_objects(path):
        if isinstance(raw, RowProblem):
            problems.append(raw)
            continue
        if not isinstance(raw, Mapping):
            problems.append(
                RowProblem(
                    line=line, message=f"expected an object, got a JSON {type(raw).__name__}"
                )
            )
            continue
        this = "pairs" if PAIR_FIELDS & set(raw) else "rows"
        if kind is None:
            kind = this
        elif this != kind:
            expected = (
                "a pair (pair_id, a, b, preferred)"
                if kind == "pairs"
                else ("a labelled row (a localeval row with label or human_score)")
            )
            problems.append(
                RowProblem(
                    line=line,
                    message=f"expected {expected} like the "
                    "lines before it; one file holds one kind",
                )
            )
            continue
        try:
            item: Pair | LabelledRow = _pair(raw, line) if kind == "pairs" else _labelled(raw, line)
        except ValueError as exc:
            rid = raw.get("pair_id" if kind == "pairs" else "id")
            problems.append(
                RowProblem(
                    line=line, id=None if rid is None else unicode_safe(str(rid)[:80]),
                    message=str(exc)[:300],
                )
            )
            continue
        key = item.pair_id if isinstance(item, Pair) else item.id
        if key in seen:
            problems.append(
                RowProblem(
                    line=line,
                    id=key,
                    message=f"duplicate id (first on line {seen[key]}); ids must be unique",
                )
            )
            continue
        seen[key] = line
        (pairs if isinstance(item, Pair) else rows).append(item)  # type: ignore[arg-type]
    if not pairs and not rows:
        why = f"; first problem: {problems[0]}" if problems else ""
        raise DatasetError(f"{path} holds no usable pair or labelled row{why}")
    return LabelledData(
        kind=kind or "rows", pairs=pairs, rows=rows, problems=problems, source=str(path)
    )


def runner_rows(items: list[Pair] | list[LabelledRow]) -> list[dict[str, Any]]:
    """The rows the normal run path evaluates: both sides of each pair (ids `<pair_id>/a`,
    `<pair_id>/b`), or the labelled rows without their labels."""
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Pair):
            for side in ("a", "b"):
                row = {k: v for k, v in getattr(item, side).items() if k != "id"}
                out.append({**row, "id": item.row_id(side)})
        else:
            out.append(dict(item.row))
    return out
