"""Step 1 of the data flow: read rows (JSONL, JSON, CSV, Parquet or dicts) into validated Samples.

A row that cannot be used becomes a RowProblem naming its line; the other rows still load.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from localeval.errors import DatasetError

# ragas (and a few other tools') column names → ours.
ALIASES = {
    "user_input": "question",
    "query": "question",
    "response": "answer",
    "retrieved_contexts": "contexts",
    "reference": "ground_truth",
    "reference_contexts": "expected_texts",
}
LIST_FIELDS = ("contexts", "retrieved_ids", "expected_ids", "retrieved_texts", "expected_texts")
TEXT_FIELDS = ("question", "answer", "ground_truth")


class Sample(BaseModel):
    """One evaluation row. Every field but `id` is optional; metrics say which they need."""

    model_config = ConfigDict(extra="allow", frozen=True)

    id: str
    line: int = Field(0, description="1-based line (JSONL/CSV row) the sample came from")
    question: str | None = None
    answer: str | None = None
    contexts: list[str] | None = None
    ground_truth: str | None = None
    retrieved_ids: list[str] | None = None
    expected_ids: list[str] | None = None
    expected_relevance: dict[str, float] | None = None
    retrieved_texts: list[str] | None = None
    expected_texts: list[str] | None = None

    @field_validator("retrieved_ids", "expected_ids", mode="before")
    @classmethod
    def _ids_as_strings(cls, v: Any) -> Any:
        if isinstance(v, list):
            return [_id_str(x) for x in v]
        return v

    @field_validator("expected_relevance", mode="before")
    @classmethod
    def _relevance_keys(cls, v: Any) -> Any:
        if isinstance(v, Mapping):
            return {_id_str(k): g for k, g in v.items()}
        return v

    def has(self, field: str) -> bool:
        """True if the field is present and not empty."""
        value = getattr(self, field, None)
        if value is None:
            return False
        if isinstance(value, str):
            return bool(value.strip())
        return not (isinstance(value, (list, dict)) and len(value) == 0)


class RowProblem(BaseModel):
    """A row that could not be loaded, with where it is and what to do."""

    line: int
    id: str | None = None
    message: str

    def __str__(self) -> str:
        where = f"line {self.line}" + (f" (id {self.id})" if self.id else "")
        return f"{where}: {self.message}"


class Dataset(BaseModel):
    samples: list[Sample]
    problems: list[RowProblem]
    source: str


MAX_DEPTH = 32  # lists/objects nested deeper than this in a row are refused


def _value_problem(field: str, value: Any) -> str | None:
    """Why a field's value cannot be used as is: nesting deeper than MAX_DEPTH, or text that is
    not valid Unicode (a lone surrogate such as "\\ud800" from a JSON escape). Iterative."""
    stack = [(field, 0), (value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, str):
            if any("\ud800" <= ch <= "\udfff" for ch in v):
                return "holds text that is not valid Unicode (an unpaired surrogate escape)"
        elif isinstance(v, (list, tuple, dict)):
            if depth >= MAX_DEPTH:
                return f"is nested more than {MAX_DEPTH} levels deep"
            items = [*v.keys(), *v.values()] if isinstance(v, dict) else v
            stack.extend((x, depth + 1) for x in items)
    return None


def _clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def _short_id(rid: Any) -> str | None:
    if rid is None:
        return None
    try:
        text = rid if isinstance(rid, str) else str(rid)
    except ValueError:  # e.g. an integer too long to print
        return f"<{type(rid).__name__}>"
    return text[:80]


def _id_str(x: Any) -> str:
    if isinstance(x, bool) or not isinstance(x, (str, int, float)):
        raise ValueError(f"ids must be strings or numbers, got {type(x).__name__}")
    if isinstance(x, float) and x.is_integer():
        x = int(x)
    return str(x)


def load(source: str | Path | Iterable[Mapping[str, Any]]) -> Dataset:
    """Load a dataset from a file path (by extension) or an iterable of dicts."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        try:
            is_file = path.is_file()
        except (OSError, ValueError):  # name too long, NUL byte in the name
            is_file = False
        if not is_file:
            raise DatasetError(
                f"dataset {path} not found; give a .jsonl, .json, .csv or .parquet file"
            )
        suffix = path.suffix.lower()
        readers = {
            ".jsonl": _read_jsonl,
            ".ndjson": _read_jsonl,
            ".json": _read_json,
            ".csv": _read_csv,
            ".parquet": _read_parquet,
        }
        if suffix not in readers:
            raise DatasetError(
                f"dataset {path}: unknown extension {suffix!r}; use .jsonl, .json, .csv or .parquet"
            )
        try:
            raw_rows = readers[suffix](path)
        except OSError as exc:
            raise DatasetError(f"dataset {path} cannot be read: {exc.strerror or exc}") from None
        name = str(path)
    else:
        if isinstance(source, (bytes, Mapping)) or not isinstance(source, Iterable):
            raise DatasetError(
                f"rows must be a file path or a list of dicts, got {type(source).__name__}"
            )
        raw_rows = [(i, row) for i, row in enumerate(source, start=1)]
        name = "<rows>"
    return _validate(raw_rows, name)


def _validate(raw_rows: Iterable[tuple[int, Any]], name: str) -> Dataset:
    samples: list[Sample] = []
    problems: list[RowProblem] = []
    seen: dict[str, int] = {}
    for line, raw in raw_rows:
        if isinstance(raw, RowProblem):
            problems.append(raw)
            continue
        try:
            sample = to_sample(raw, line)
        except ValueError as exc:  # includes pydantic's ValidationError
            rid = raw.get("id") if isinstance(raw, Mapping) else None
            problems.append(RowProblem(line=line, id=_short_id(rid), message=_clip(str(exc))))
            continue
        if sample.id in seen:
            problems.append(
                RowProblem(
                    line=line,
                    id=sample.id,
                    message=(f"duplicate id (first on line {seen[sample.id]}); ids must be unique"),
                )
            )
            continue
        seen[sample.id] = line
        samples.append(sample)
    return Dataset(samples=samples, problems=problems, source=name)


def to_sample(raw: Any, line: int) -> Sample:
    """Validate one raw row; raises ValueError with a one-line, user-facing message."""
    if not isinstance(raw, Mapping):
        raise ValueError(
            f"row is a JSON {type(raw).__name__}, expected an object with fields "
            "question, answer, contexts, ..."
        )
    row: dict[str, Any] = {}
    for key, value in raw.items():
        if not isinstance(key, str):
            raise ValueError(f"field names must be strings, got {key!r}")
        target = ALIASES.get(key, key)
        if target in row and key != target:
            continue  # our own name wins over an alias
        row[target] = value
    rid = row.get("id")
    if rid is None or (isinstance(rid, str) and not rid.strip()):
        row["id"] = f"row-{line}"
    else:
        try:
            row["id"] = _id_str(rid)
        except ValueError as exc:
            raise ValueError(f"field 'id': {exc}") from None
    for field in TEXT_FIELDS:
        if field in row and row[field] is not None and not isinstance(row[field], str):
            raise ValueError(f"field {field!r} must be a string, got {type(row[field]).__name__}")
    for field in LIST_FIELDS:
        value = row.get(field)
        if value is None:
            continue
        if not isinstance(value, list):
            raise ValueError(f"field {field!r} must be a list, got {type(value).__name__}")
        if field in ("contexts", "retrieved_texts", "expected_texts"):
            bad = [i for i, v in enumerate(value) if not isinstance(v, str)]
            if bad:
                raise ValueError(
                    f"field {field!r} must be a list of strings; item {bad[0]} is "
                    f"{type(value[bad[0]]).__name__}"
                )
    for field, value in row.items():
        problem = _value_problem(field, value)
        if problem:
            raise ValueError(f"field {_clip(field, 40)!r} {problem}")
    row["line"] = line
    try:
        return Sample.model_validate(row)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise ValueError(f"field {loc!r}: {err['msg']}") from None


# ---- readers: yield (line, dict) or (line, RowProblem) -------------------------------------


def _decode(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DatasetError(
            f"{path}: line {line} is not valid UTF-8 (byte {exc.start}); save the file as UTF-8"
        ) from None


def _read_jsonl(path: Path) -> list[tuple[int, Any]]:
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    rows: list[tuple[int, Any]] = []
    for line_no, raw_line in enumerate(data.split(b"\n"), start=1):
        if not raw_line.strip():
            continue
        try:
            text = raw_line.decode("utf-8")
        except UnicodeDecodeError:
            rows.append(
                (line_no, RowProblem(line=line_no, message="not valid UTF-8; fix the encoding"))
            )
            continue
        try:
            rows.append((line_no, json.loads(text)))
        except json.JSONDecodeError as exc:
            rows.append(
                (
                    line_no,
                    RowProblem(
                        line=line_no,
                        message=(
                            f"malformed JSON ({exc.msg} at column {exc.colno}); "
                            "fix or remove the line"
                        ),
                    ),
                )
            )
        except (ValueError, RecursionError) as exc:  # a huge integer, absurd nesting
            rows.append(
                (
                    line_no,
                    RowProblem(
                        line=line_no,
                        message=_clip(
                            f"unreadable JSON ({type(exc).__name__}: {exc}); fix or remove the line"
                        ),
                    ),
                )
            )
    return rows


def _read_json(path: Path) -> list[tuple[int, Any]]:
    try:
        data = json.loads(_decode(path))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        message = f"{path}: unreadable JSON ({type(exc).__name__}: {exc})"
        raise DatasetError(_clip(message)) from None
    if isinstance(data, Mapping):  # {"samples": [...]} or a single row
        data = data.get("samples", data.get("rows", [data]))
    if not isinstance(data, list):
        raise DatasetError(f"{path}: expected a list of objects")
    return list(enumerate(data, start=1))


def _csv_cell(field: str, value: str) -> Any:
    """CSV cells are strings; list fields may hold a JSON list (or one plain string)."""
    target = ALIASES.get(field, field)
    if target in LIST_FIELDS or target == "expected_relevance":
        stripped = value.strip()
        if not stripped:
            return None
        if stripped[0] in "[{":
            try:
                return json.loads(stripped)
            except (ValueError, RecursionError):
                raise ValueError(f"field {_clip(field, 40)!r}: not a valid JSON list") from None
        return [value]
    return value if value != "" or target in ("answer",) else None


def _bad_text(text: str) -> bool:
    """True if text holds bytes that were not UTF-8 (kept as lone surrogates by surrogateescape)."""
    return any("\udc80" <= ch <= "\udcff" for ch in text)


def _read_csv(path: Path) -> list[tuple[int, Any]]:
    data = path.read_bytes()
    text = data.decode("utf-8-sig", errors="surrogateescape")  # bad bytes → per-row problems
    reader = csv.DictReader(io.StringIO(text, newline=""))
    rows: list[tuple[int, Any]] = []
    old_limit = csv.field_size_limit()
    csv.field_size_limit(2**31 - 1)  # a long context is not an error
    try:
        header = reader.fieldnames or []
        if any(_bad_text(h) for h in header):
            raise DatasetError(f"{path}: the header row is not valid UTF-8; save the file as UTF-8")
        for record in reader:
            line = reader.line_num
            if None in record:
                rows.append((line, RowProblem(line=line, message="more cells than header columns")))
                continue
            if any(_bad_text(v) for v in record.values() if v is not None):
                rows.append(
                    (line, RowProblem(line=line, message="not valid UTF-8; fix the encoding"))
                )
                continue
            try:
                rows.append(
                    (line, {k: _csv_cell(k, v if v is not None else "") for k, v in record.items()})
                )
            except ValueError as exc:
                rows.append((line, RowProblem(line=line, message=_clip(str(exc)))))
    except csv.Error as exc:
        raise DatasetError(f"{path}: CSV error at line {reader.line_num}: {exc}") from None
    finally:
        csv.field_size_limit(old_limit)
    return rows


def _read_parquet(path: Path) -> list[tuple[int, Any]]:
    try:
        import pandas as pd
    except ImportError:
        raise DatasetError(
            "reading Parquet needs pandas and pyarrow: pip install pandas pyarrow"
        ) from None
    try:
        frame = pd.read_parquet(path)
    except ImportError as exc:
        raise DatasetError(f"reading Parquet needs pyarrow: pip install pyarrow ({exc})") from None
    except Exception as exc:  # pyarrow raises its own types for a corrupt file
        raise DatasetError(_clip(f"{path}: not a readable Parquet file ({exc})")) from None
    rows = []
    for i, rec in enumerate(frame.to_dict(orient="records"), start=1):
        rows.append((i, {k: _parquet_value(v) for k, v in rec.items()}))
    return rows


def _parquet_value(v: Any) -> Any:
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, float) and v != v:  # NaN marks a missing cell
        return None
    return v
