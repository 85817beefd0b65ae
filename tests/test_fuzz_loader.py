"""Fuzz the dataset loader: whatever the file holds, the result is a clean load with per-row
problems (each naming its line), or, for a file that cannot be read at all, one DatasetError
line. Never a traceback. Random JSON values, wrong types, huge strings and integers, deep
nesting, invalid UTF-8, BOMs, CRLF, CSV quoting."""

from __future__ import annotations

import csv
import io
import json
import math
import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from localeval.data.dataset import Dataset, RowProblem, Sample, load
from localeval.errors import DatasetError
from localeval.retrieval import score_query

FIELDS = [
    "id",
    "question",
    "answer",
    "contexts",
    "ground_truth",
    "retrieved_ids",
    "expected_ids",
    "expected_relevance",
    "retrieved_texts",
    "expected_texts",
    "user_input",
    "response",
    "retrieved_contexts",
    "reference",
    "reference_contexts",
    "query",
    "line",
]
# At least 1,000 examples per run (CI included); LOCALEVAL_FUZZ_EXAMPLES=N to dig deeper.
N_EXAMPLES = max(1000, int(os.environ.get("LOCALEVAL_FUZZ_EXAMPLES", "1000")))
FUZZ = settings(
    max_examples=N_EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
SOME = settings(FUZZ, max_examples=max(300, N_EXAMPLES // 3))

scalars = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=30)
)
json_values = st.recursive(
    scalars,
    lambda c: st.lists(c, max_size=4) | st.dictionaries(st.text(max_size=8), c, max_size=4),
    max_leaves=12,
)
huge_text = st.builds(
    lambda s, n: s * n, st.text(min_size=1, max_size=3), st.integers(1000, 100_000)
)
field_values = (
    json_values
    | huge_text
    | st.lists(st.text(max_size=20) | huge_text, max_size=4)
    | st.lists(st.integers() | st.text(max_size=5), max_size=4)
)
rows = st.dictionaries(st.sampled_from(FIELDS) | st.text(max_size=8), field_values, max_size=7)
special_lines = st.sampled_from(
    [
        "[" * 5000,
        "{" * 3000,
        "1" * 5000,
        '{"id": ' + "9" * 5000 + "}",
        '{"id": 1e400}',
        '{"id": NaN, "question": Infinity}',
        '\ufeff{"id": "bom"}',
        "{broken",
        '"just a string"',
        "null",
        "[]",
        "[{}]",
        '{"id": "x", "contexts": ' + "[" * 40 + "]" * 40 + "}",
        '{"id": "dup"}',
        '{"id": "\\ud800"}',
        '{"question": "\\u0000"}',
    ]
)


def _dumps(value: object, ascii_only: bool) -> str:
    return json.dumps(value, ensure_ascii=ascii_only)


jsonl_lines = st.one_of(
    st.tuples(rows, st.booleans()).map(
        lambda t: _dumps(t[0], t[1]).encode("utf-8", "surrogatepass")
    ),
    st.tuples(json_values, st.booleans()).map(
        lambda t: _dumps(t[0], t[1]).encode("utf-8", "surrogatepass")
    ),
    special_lines.map(lambda s: s.encode("utf-8")),
    st.binary(max_size=40),
    st.just(b"   "),
)


def check(data: Dataset) -> None:
    """The invariants every load must keep."""
    assert isinstance(data, Dataset)
    ids = [s.id for s in data.samples]
    assert len(ids) == len(set(ids))
    assert list(data.hashes) == ids == list(data.lines)  # every row hashed as it loads
    for sample in data.samples:
        assert isinstance(sample, Sample) and sample.line == data.lines[sample.id] >= 1
        for name in ("question", "answer", "contexts", "ground_truth", "retrieved_ids"):
            sample.has(name)
        check_types(sample)
    for problem in data.problems:
        assert isinstance(problem, RowProblem) and problem.line >= 1
        assert problem.message and len(problem.message) < 1000
        str(problem)


def check_types(sample: Sample) -> None:
    """What the loader lets through, the metrics can use: text fields are strings, list fields
    lists of strings, grades finite numbers >= 0 — and the retrieval metrics score the row
    without an exception (which would be an "internal error" of the run)."""
    for name in ("question", "answer", "ground_truth"):
        assert getattr(sample, name) is None or isinstance(getattr(sample, name), str)
    for name in ("contexts", "retrieved_ids", "expected_ids", "retrieved_texts", "expected_texts"):
        value = getattr(sample, name)
        assert value is None or all(isinstance(v, str) for v in value)
    grades = sample.expected_relevance
    if grades is not None:
        assert all(isinstance(k, str) for k in grades)
        assert all(isinstance(g, float) and math.isfinite(g) and g >= 0 for g in grades.values())
    expected = grades or sample.expected_ids
    if sample.retrieved_ids is not None and expected:
        score_query(sample.retrieved_ids, expected, at=(1, 3))


def one_line_error(exc: DatasetError) -> None:
    text = str(exc)
    assert text and "\n" not in text and len(text) < 2000


@FUZZ
@given(lines=st.lists(jsonl_lines, max_size=8), bom=st.booleans(), crlf=st.booleans())
def test_jsonl_never_raises(tmp_path_factory, lines: list[bytes], bom: bool, crlf: bool) -> None:
    path = tmp_path_factory.mktemp("fz") / "d.jsonl"
    body = (b"\r\n" if crlf else b"\n").join(lines)
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + body)
    data = load(path)  # JSONL is read line by line: never a whole-file error
    check(data)
    text = body[3:] if not bom and body.startswith(b"\xef\xbb\xbf") else body  # one BOM is dropped
    nonblank = [n for n, raw in enumerate(text.split(b"\n"), 1) if raw.strip()]
    seen = sorted([s.line for s in data.samples] + [p.line for p in data.problems])
    assert seen == nonblank  # every line is either a sample or a problem naming that line


cells = (
    st.text(max_size=20)
    | huge_text
    | st.sampled_from(
        [
            'a,"b"',
            '"',
            '""',
            "x\ny",
            "x\r\ny",
            "[1, 2]",
            '["c1", "c2"]',
            "[",
            "{",
            '{"a": 1}',
            "[" * 200,
            "1" * 5000,
            " ",
            "\x00",
            "null",
        ]
    )
    | st.lists(st.text(max_size=10), max_size=3).map(json.dumps)
)


@FUZZ
@given(
    header=st.lists(st.sampled_from(FIELDS) | st.text(max_size=6), min_size=1, max_size=6),
    body=st.lists(st.lists(cells, max_size=7), max_size=6),
    quoting=st.sampled_from([csv.QUOTE_MINIMAL, csv.QUOTE_ALL, csv.QUOTE_NONNUMERIC]),
    bom=st.booleans(),
    junk=st.binary(max_size=12),
    junk_at=st.integers(0, 10_000),
    raw=st.text(alphabet='ab,"\n\r \\', max_size=60),
    use_raw=st.booleans(),
)
def test_csv_never_raises(
    tmp_path_factory,
    header: list[str],
    body: list[list[str]],
    quoting: int,
    bom: bool,
    junk: bytes,
    junk_at: int,
    raw: str,
    use_raw: bool,
) -> None:
    buf = io.StringIO(newline="")
    writer = csv.writer(buf, quoting=quoting)
    writer.writerow(header)
    writer.writerows(body)
    data = buf.getvalue().encode("utf-8", "surrogatepass")
    if use_raw:
        data += raw.encode()
    if junk:  # invalid UTF-8 or stray bytes somewhere in the file
        at = junk_at % (len(data) + 1)
        data = data[:at] + junk + data[at:]
    path = tmp_path_factory.mktemp("fz") / "d.csv"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + data)
    try:
        loaded = load(path)
    except DatasetError as exc:  # only for a file that is unreadable as a whole (its header)
        one_line_error(exc)
        return
    check(loaded)


@SOME
@given(
    value=json_values
    | st.lists(rows, max_size=5)
    | st.fixed_dictionaries({"samples": json_values | st.lists(rows, max_size=3)}),
    bom=st.booleans(),
    garbage=st.binary(max_size=6),
)
def test_json_file_never_raises(tmp_path_factory, value: object, bom: bool, garbage: bytes) -> None:
    path = tmp_path_factory.mktemp("fz") / "d.json"
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + json.dumps(value).encode() + garbage)
    try:
        loaded = load(path)
    except DatasetError as exc:  # a .json file is one document: malformed → one clear error
        one_line_error(exc)
        return
    check(loaded)


@SOME
@given(items=st.lists(rows | json_values, max_size=6))
def test_python_rows_never_raise(items: list[object]) -> None:
    check(load(items))


grades = (
    st.integers(-5, 5)
    | st.integers()
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.booleans()
    | st.none()
    | st.text(max_size=5)
    | st.lists(st.integers(), max_size=2)
    | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2)
)
ids = st.text(max_size=6) | st.integers() | st.floats(allow_nan=True, allow_infinity=True)
retrieval_rows = st.fixed_dictionaries(
    {"id": ids},
    optional={
        "retrieved_ids": st.lists(ids | json_values, max_size=5) | json_values,
        "expected_ids": st.lists(ids | json_values, max_size=5) | json_values,
        "expected_relevance": st.dictionaries(st.text(max_size=4), grades, max_size=4)
        | json_values,
        "contexts": st.lists(st.text(max_size=5) | json_values, max_size=3) | json_values,
    },
)


@FUZZ
@given(items=st.lists(retrieval_rows, min_size=1, max_size=6))
def test_grades_ids_and_nested_types_are_checked_by_the_loader(items: list[dict]) -> None:
    """Issue 11: a bad grade, id or nested type is the row's problem naming its field, never a
    sample that fails later in a metric."""
    data = load(items)
    check(data)
    assert len(data.samples) + len(data.problems) == len(items)
    for problem in data.problems:
        if "duplicate id" not in problem.message:
            assert problem.message.startswith("field '"), problem.message


def test_deep_nesting_and_huge_numbers_are_row_problems(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(
        "\n".join(
            [
                json.dumps({"id": "ok", "question": "q"}),
                "[" * 5000 + "]" * 5000,
                '{"id": ' + "9" * 5000 + "}",
                json.dumps({"id": "deep", "meta": json.loads("[" * 100 + "]" * 100)}),
                json.dumps({"id": "big", "contexts": ["x" * 2_000_000]}),
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    data = load(path)
    assert [s.id for s in data.samples] == ["ok", "big"]
    messages = {p.line: p.message for p in data.problems}
    assert set(messages) == {2, 3, 4}
    assert "RecursionError" in messages[2] and "unreadable JSON" in messages[3]
    assert "nested more than" in messages[4]


def test_csv_bad_utf8_row_and_long_field(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_bytes(
        b"\xef\xbb\xbfid,question,contexts\r\n"
        b'a,"q, with comma","[""c1""]"\r\n'
        b"b,caf\xe9,c\r\n"
        b"c,long," + b"y" * 300_000 + b"\r\n"
    )
    data = load(path)
    assert [s.id for s in data.samples] == ["a", "c"]
    assert data.samples[0].contexts == ["c1"] and len(data.samples[1].contexts[0]) == 300_000
    assert [(p.line, p.message) for p in data.problems] == [
        (3, "not valid UTF-8; fix the encoding")
    ]
