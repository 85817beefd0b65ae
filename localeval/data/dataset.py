"""Step 1 of the data flow: read rows (JSONL, JSON, CSV, Parquet or dicts) into validated Samples.

A row that cannot be used becomes a RowProblem naming its line; the other rows still load. A run
over a large file keeps its Samples compact (`PickledList`: each one pickled, rebuilt when asked
for; a query-log row takes ~500 bytes instead of ~2.5 KB as objects), never holding every row as
a pydantic object at once.
"""

from __future__ import annotations

import hashlib
import json
import math
import pickle
import re
import stat
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Generic, TypeVar, overload

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from localeval.data.readers import (
    ALIASES,
    LIST_FIELDS,
    READERS,
    RowProblem,
    clip,
    require_text,
    require_texts,
)
from localeval.errors import DatasetError, first_error
from localeval.safe import text_encoding, unicode_safe

TEXT_FIELDS = ("question", "answer", "ground_truth")
TEXT_LIST_FIELDS = ("contexts", "retrieved_texts", "expected_texts")
T = TypeVar("T")


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
    def _relevance(cls, v: Any) -> Any:
        if v is None:
            return v
        if not isinstance(v, Mapping):
            raise ValueError(f"must be an object {{id: grade}}, got {type(v).__name__}")
        return {_id_str(k): _grade(k, g) for k, g in v.items()}

    def own_texts(self) -> list[str]:
        """The texts a judge must read at least once for this sample (the floor's reading part,
        docs/engine.md): its contexts, question, answer and ground truth, the empty ones left
        out."""
        texts = [*(self.contexts or ()), self.question, self.answer, self.ground_truth]
        return [t for t in texts if t]

    def value(self, field: str) -> Any:
        """The row's value of a field, a declared one or any other column, None when the row
        has none. Read as data, never as an attribute: a column named `copy`, `json` or
        `schema` is the column's value, not the model's method of that name."""
        if field in type(self).model_fields:
            return getattr(self, field)
        return (self.model_extra or {}).get(field)

    def has(self, field: str) -> bool:
        """True if the field is present and not empty."""
        value = self.value(field)
        if value is None:
            return False
        if isinstance(value, str):
            return bool(value.strip())
        return not (isinstance(value, (list, dict)) and len(value) == 0)

    def missing(self, requires: Iterable[str]) -> list[str]:
        """Of a metric's required fields (`@metric(requires=...)`), those the sample lacks;
        "a|b" is satisfied by either field. A conversation (`turns`) has a field when one of
        its assistant turns does (data/conversation.covers: what each turn is scored with)."""
        has = self.has
        if self.conversation:
            from localeval.data.conversation import covers, turns_of

            turns = turns_of(self.value("turns"))
            has = lambda f: self.has(f) or covers(turns, f)  # noqa: E731
        return [f for f in requires if not any(has(alt) for alt in f.split("|"))]

    @property
    def conversation(self) -> bool:
        """Whether the row is a conversation (its `turns`, data/conversation.py)."""
        return bool((self.model_extra or {}).get("turns"))


class PickledList(Sequence[T], Generic[T]):
    """Items in order; each access rebuilds an item equal to the one appended."""

    def __init__(self, blobs: list[bytes] | None = None) -> None:
        self._blobs = [] if blobs is None else blobs

    def append(self, item: T) -> None:
        self._blobs.append(pickle.dumps(item, protocol=pickle.HIGHEST_PROTOCOL))

    def __len__(self) -> int:
        return len(self._blobs)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            return [pickle.loads(b) for b in self._blobs[index]]
        return pickle.loads(self._blobs[index])

    def __iter__(self) -> Iterator[T]:
        for blob in self._blobs:
            yield pickle.loads(blob)

    def select(self, keep: Iterable[bool]) -> PickledList[T]:
        """The items whose flag in `keep` (one per item, in order) is true; the pickles are
        shared, not copied."""
        return PickledList([b for b, k in zip(self._blobs, keep, strict=True) if k])

    def clear(self) -> None:
        self._blobs.clear()


class Dataset(BaseModel):
    """The rows that loaded (a PickledList when loaded compact), the rows that did not, where
    they came from, and each loaded row's input hash and line by id, in input order (what a
    run matches a finished result by, and orders results.jsonl by)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    # a PickledList[Sample] is taken as it is (iterating it here would rebuild every sample)
    samples: PickledList | list[Sample] = Field(union_mode="left_to_right")
    problems: list[RowProblem]
    source: str
    hashes: dict[str, str] = Field(default_factory=dict)
    lines: dict[str, int] = Field(default_factory=dict)
    conversations: int = 0
    """How many of the loaded rows are conversations (data/conversation.py)."""


MAX_DEPTH = 32  # lists/objects nested deeper than this in a row are refused
_SURROGATE = re.compile("[\ud800-\udfff]")


def value_problem(field: str, value: Any) -> str | None:
    """Why a field's value cannot be used as is: nesting deeper than MAX_DEPTH, or text that is
    not valid Unicode (a lone surrogate such as "\\ud800" from a JSON escape). Iterative."""
    stack = [(field, 0), (value, 0)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, str):
            if _SURROGATE.search(v):  # C speed: a character loop took seconds on a 50 MB line
                return "holds text that is not valid Unicode (an unpaired surrogate escape)"
        elif isinstance(v, (list, tuple, dict)):
            if depth >= MAX_DEPTH:
                return f"is nested more than {MAX_DEPTH} levels deep"
            items = [*v.keys(), *v.values()] if isinstance(v, dict) else v
            stack.extend((x, depth + 1) for x in items)
        elif v is not None and not isinstance(v, (bool, int, float)) and not _storable(v):
            return (f"holds a value of type {clip(type(v).__name__, 40)!r} that cannot be "
                    "written to results.jsonl; convert the column to text or drop it")
    return None


def _storable(value: Any) -> bool:
    """Whether pydantic can write `value` as JSON (a date, a set: yes; an object(), bytes
    that are not UTF-8: no)."""
    from pydantic_core import to_json

    try:
        to_json(value)
    except Exception:  # PydanticSerializationError, UnicodeDecodeError, ...
        return False
    return True


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
    if isinstance(x, float):
        if not math.isfinite(x):
            raise ValueError(f"ids must be strings or finite numbers, got {x!r}")
        if x.is_integer():
            x = int(x)
    return str(x)


def _grade(rid: Any, g: Any) -> float:
    """A relevance grade: a finite number, 0 or more (0 = judged not relevant)."""
    if isinstance(g, bool) or not isinstance(g, (int, float)):
        raise ValueError(
            f"the grade of id {_short_id(rid)!r} must be a number, got {type(g).__name__}"
        )
    try:
        value = float(g)
    except OverflowError:
        value = math.inf
    if not math.isfinite(value) or value < 0:
        raise ValueError(
            f"the grade of id {_short_id(rid)!r} must be a finite number, 0 or more; "
            f"got {clip(repr(g), 40)}"
        )
    return value


def load(source: str | Path | Iterable[Mapping[str, Any]], *, compact: bool = False) -> Dataset:
    """Load a dataset from a file path (by extension) or an iterable of dicts. `compact`: keep
    a file's samples as pickles (PickledList), so that a large file's rows are never all
    pydantic objects at once."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        why = not_a_file(path)
        if why:
            raise DatasetError(f"dataset {path} {why}; give a .jsonl, .json, .csv or .parquet file")
        suffix = path.suffix.lower()
        if suffix not in READERS:
            raise DatasetError(
                f"dataset {path}: unknown extension {suffix!r}; use .jsonl, .json, .csv or .parquet"
            )
        try:
            raw_rows = READERS[suffix](path)
        except OSError as exc:
            raise DatasetError(f"dataset {path} cannot be read: {exc.strerror or exc}") from None
        name = unicode_safe(str(path))  # a non-UTF-8 file name: its bytes as \xNN
    else:
        if isinstance(source, (bytes, Mapping)) or not isinstance(source, Iterable):
            raise DatasetError(
                f"rows must be a file path or a list of dicts, got {type(source).__name__}"
            )
        raw_rows = [(i, row) for i, row in enumerate(source, start=1)]
        name = "<rows>"
        compact = False  # the rows are in memory already
    return _validate(raw_rows, name, PickledList() if compact else [])


_CSV_LINE = re.compile(r"^[^{}\[\]]*[,\t;][^{}\[\]]*$")


def require_samples(data: Dataset, source: str | Path | Iterable[Mapping[str, Any]]) -> None:
    """Refuse a dataset file that gave no sample (`nothing_usable` says why, in one line): a
    run of it would exit 0 with nothing scored. `load` itself never refuses a readable JSONL
    file (every line is a sample or a problem)."""
    if isinstance(source, (str, Path)) and len(data.samples) == 0:
        raise DatasetError(nothing_usable(Path(source), data.source, data.problems))


def nothing_usable(path: Path, name: str, problems: Sequence[RowProblem]) -> str:
    """Why a dataset file gave no sample, in one line with what to do: an empty file, CSV
    content under a JSON name, or every row unreadable (the first problem shown)."""
    try:
        with path.open("rb") as f:
            raw = f.read(4096)
    except OSError:
        raw = b""
    encoding = text_encoding(raw)
    if encoding != "utf-8-sig":
        said = "UTF-32" if "32" in encoding else "UTF-16"
        source = {"utf-16-le": "UTF-16LE", "utf-16-be": "UTF-16BE"}.get(encoding, said)
        return (f"dataset {name} is {said} text, not UTF-8: save it as UTF-8 (for instance "
                f"iconv -f {source} -t UTF-8)")
    head = raw.decode("utf-8", "replace").lstrip("\ufeff")
    first = next((line.strip() for line in head.splitlines() if line.strip()), "")
    suffix = path.suffix.lower()
    if not first and not problems:
        return f"dataset {name} is empty: no rows to evaluate (one JSON object per line)"
    if suffix in (".jsonl", ".json") and first and _CSV_LINE.match(first):
        return (f"dataset {name} looks like CSV (first line: {clip(first, 60)!r}), not JSON "
                f"Lines: rename it to {path.with_suffix('.csv').name}")
    if not problems:
        return f"dataset {name} has no rows to evaluate (a header without rows?)"
    return (f"dataset {name}: none of its {len(problems)} row(s) can be used (line "
            f"{problems[0].line}: {problems[0].message})")


def not_a_file(path: Path) -> str | None:
    """Why `path` cannot be read as a dataset file (None: a regular file, links followed)."""
    try:
        mode = path.stat().st_mode
    except (FileNotFoundError, NotADirectoryError):
        return "not found"
    except (OSError, ValueError) as exc:  # name too long, NUL byte, a link loop, no permission
        return f"cannot be opened ({getattr(exc, 'strerror', None) or type(exc).__name__})"
    if stat.S_ISDIR(mode):
        return "is a folder"
    if stat.S_ISFIFO(mode):
        return "is a FIFO (named pipe), not a regular file: save the rows to a file"
    if not stat.S_ISREG(mode):
        return "is a device or socket, not a regular file"
    return None


def _validate(
    raw_rows: Iterable[tuple[int, Any]], name: str, samples: list[Sample] | PickledList[Sample]
) -> Dataset:
    problems: list[RowProblem] = []
    hashes: dict[str, str] = {}
    seen: dict[str, int] = {}  # id → line
    conversations = 0
    for line, raw in raw_rows:
        if isinstance(raw, RowProblem):
            problems.append(raw)
            continue
        try:
            sample = to_sample(raw, line)
        except ValueError as exc:  # includes pydantic's ValidationError
            rid = raw.get("id") if isinstance(raw, Mapping) else None
            problems.append(RowProblem(line=line, id=_short_id(rid), message=clip(str(exc))))
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
        seen[sample.id], hashes[sample.id] = line, input_hash(sample)
        conversations += sample.conversation
        samples.append(sample)
    return Dataset(samples=samples, problems=problems, source=name, hashes=hashes, lines=seen,
                   conversations=conversations)


def input_hash(sample: Sample) -> str:
    """A short, stable hash of a row's content (its line number excluded): --resume redoes a
    row whose hash changed."""
    payload = json.dumps(
        sample.model_dump(mode="json", exclude={"line"}),
        sort_keys=True,
        ensure_ascii=False,
        default=str,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:16]


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
    if "turns" in row or isinstance(row.get("question"), list):  # a conversation
        from localeval.data.conversation import normalize  # its turns as ours, validated

        row = normalize(row)
    for field in TEXT_FIELDS:
        require_text(row.get(field), f"field {field!r}")
    for field in LIST_FIELDS:
        value = row.get(field)
        if value is None:
            continue
        if not isinstance(value, list):
            raise ValueError(f"field {field!r} must be a list, got {type(value).__name__}")
        if field in TEXT_LIST_FIELDS:
            require_texts(value, f"field {field!r}")
    for field, value in row.items():
        problem = value_problem(field, value)
        if problem:
            raise ValueError(f"field {clip(field, 40)!r} {problem}")
    row["line"] = line
    try:
        return Sample.model_validate(row)
    except ValidationError as exc:
        loc, msg = first_error(exc, "")
        raise ValueError(f"field {loc!r}: {msg.removeprefix('Value error, ')}") from None
