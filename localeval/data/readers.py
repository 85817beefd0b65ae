"""Reading dataset files into raw rows: JSONL, JSON, CSV and Parquet. Each reader returns
(line, dict) pairs, or (line, RowProblem) for a line that cannot be read (JSONL: parsed as they
are asked for); dataset.py validates them, with the field checks here (`require_text`,
`require_texts`) that a conversation's turns share (conversation.py)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, field_validator

from localeval.errors import DatasetError
from localeval.safe import unicode_safe

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


class RowProblem(BaseModel):
    """A row that could not be loaded, with where it is and what to do."""

    line: int
    id: str | None = None
    message: str

    @field_validator("id", "message")
    @classmethod
    def _writable(cls, v: str | None) -> str | None:
        """A rejected id may hold a lone surrogate: keep it printable and writable as UTF-8."""
        return None if v is None else unicode_safe(v)

    def __str__(self) -> str:
        where = f"line {self.line}" + (f" (id {self.id})" if self.id else "")
        return f"{where}: {self.message}"


def clip(text: str, limit: int = 300) -> str:
    return text if len(text) <= limit else text[:limit] + "..."


def require_text(value: Any, what: str) -> None:
    """ValueError "<what> must be a string, got <type>" unless `value` is a string or None."""
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{what} must be a string, got {type(value).__name__}")


def require_texts(value: list[Any], what: str) -> None:
    """ValueError naming the first item of the list `value` that is not a string."""
    bad = next((i for i, v in enumerate(value) if not isinstance(v, str)), None)
    if bad is not None:
        raise ValueError(f"{what} must be a list of strings; item {bad} is "
                         f"{type(value[bad]).__name__}")


def _decode(path: Path) -> str:
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise DatasetError(
            f"{path}: line {line} is not valid UTF-8 (byte {exc.start}); save the file as UTF-8"
        ) from None


def _read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    """The file is read at once (an OSError here, not while iterating); its rows are parsed one
    at a time as they are asked for."""
    data = path.read_bytes()
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    return _jsonl_rows(data)


def _jsonl_rows(data: bytes) -> Iterator[tuple[int, Any]]:
    for line_no, raw_line in enumerate(io.BytesIO(data), start=1):
        if raw_line.endswith(b"\n"):
            raw_line = raw_line[:-1]
        if not raw_line.strip():
            continue
        yield line_no, _jsonl_row(line_no, raw_line)


def _jsonl_row(line_no: int, raw_line: bytes) -> Any:
    try:
        text = raw_line.decode("utf-8")
    except UnicodeDecodeError:
        return RowProblem(line=line_no, message="not valid UTF-8; fix the encoding")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        return RowProblem(
            line=line_no,
            message=f"malformed JSON ({exc.msg} at column {exc.colno}); fix or remove the line",
        )
    except (ValueError, RecursionError) as exc:  # a huge integer, absurd nesting
        return RowProblem(
            line=line_no,
            message=clip(f"unreadable JSON ({type(exc).__name__}: {exc}); fix or remove the line"),
        )


def _read_json(path: Path) -> list[tuple[int, Any]]:
    try:
        data = json.loads(_decode(path))
    except json.JSONDecodeError as exc:
        raise DatasetError(f"{path}: malformed JSON at line {exc.lineno}: {exc.msg}") from None
    except (ValueError, RecursionError) as exc:
        message = f"{path}: unreadable JSON ({type(exc).__name__}: {exc})"
        raise DatasetError(clip(message)) from None
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
                raise ValueError(f"field {clip(field, 40)!r}: not a valid JSON list") from None
        return [value]
    return value if value != "" or target in ("answer",) else None


def refuse_duplicate_columns(names: Iterable[Any], where: str) -> None:
    """A table whose columns repeat a name would keep one of them silently: refused."""
    seen: set[str] = set()
    for name in names:
        key = str(name)
        if key in seen:
            raise DatasetError(
                f"{where}: the column {clip(key, 60)!r} appears more than once; rename or drop "
                "the copies (only one of them would be read)"
            )
        seen.add(key)


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
        refuse_duplicate_columns(header, str(path))
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
                rows.append((line, RowProblem(line=line, message=clip(str(exc)))))
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
        raise DatasetError(clip(f"{path}: not a readable Parquet file ({exc})")) from None
    refuse_duplicate_columns([str(c) for c in frame.columns], str(path))
    rows = []
    for i, rec in enumerate(frame.to_dict(orient="records"), start=1):
        rows.append((i, {k: _parquet_value(v) for k, v in rec.items()}))
    return rows


def _parquet_value(v: Any) -> Any:
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, float) and v != v:  # NaN marks a missing cell
        return None
    if isinstance(v, dict):  # a struct column holds every row's keys; absent ones are None
        return {k: x for k, x in v.items() if x is not None}
    return v


READERS: dict[str, Callable[[Path], Iterable[tuple[int, Any]]]] = {
    ".jsonl": _read_jsonl,
    ".ndjson": _read_jsonl,
    ".json": _read_json,
    ".csv": _read_csv,
    ".parquet": _read_parquet,
}
