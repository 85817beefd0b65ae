"""Loading rows: formats, ragas aliases, and every bad-input case named with its line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.data.dataset import load
from localeval.errors import DatasetError

GOOD = {"id": "a", "question": "q?", "answer": "a.", "contexts": ["c1", "c2"], "ground_truth": "g"}


def write_jsonl(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_jsonl_good_rows_and_ragas_aliases(tmp_path: Path) -> None:
    ragas = {"user_input": "q2", "response": "a2", "retrieved_contexts": ["x"], "reference": "g2"}
    data = load(write_jsonl(tmp_path / "d.jsonl", [json.dumps(GOOD), json.dumps(ragas)]))
    assert not data.problems
    a, b = data.samples
    assert (a.id, a.contexts, a.line) == ("a", ["c1", "c2"], 1)
    assert (b.id, b.question, b.answer, b.contexts, b.ground_truth) == (
        "row-2",
        "q2",
        "a2",
        ["x"],
        "g2",
    )


def test_malformed_line_and_missing_answer_are_named_and_others_load(tmp_path: Path) -> None:
    no_answer = {k: v for k, v in GOOD.items() if k != "answer"} | {"id": "b"}
    path = write_jsonl(tmp_path / "d.jsonl", [json.dumps(GOOD), "{not json", json.dumps(no_answer)])
    data = load(path)
    assert [s.id for s in data.samples] == ["a", "b"]
    assert len(data.problems) == 1 and data.problems[0].line == 2
    assert "malformed JSON" in data.problems[0].message
    assert not data.samples[1].has("answer")


@pytest.mark.parametrize(
    ("row", "needle"),
    [
        ({"id": "x", "question": 3}, "'question' must be a string"),
        ({"id": "x", "contexts": "one string"}, "'contexts' must be a list"),
        ({"id": "x", "contexts": ["ok", 5]}, "item 1 is int"),
        ({"id": ["x"]}, "field 'id'"),
        ({"id": "x", "retrieved_ids": [{"a": 1}]}, "retrieved_ids"),
    ],
)
def test_wrong_types_are_row_problems(tmp_path: Path, row: dict, needle: str) -> None:
    data = load(write_jsonl(tmp_path / "d.jsonl", [json.dumps(GOOD), json.dumps(row)]))
    assert [s.id for s in data.samples] == ["a"]
    assert len(data.problems) == 1 and data.problems[0].line == 2
    assert needle in data.problems[0].message, data.problems[0].message


def test_non_object_row_duplicate_id_and_empty_answer(tmp_path: Path) -> None:
    lines = [
        json.dumps(GOOD),
        "[1, 2]",
        json.dumps(GOOD),
        json.dumps(GOOD | {"id": "e", "answer": "  "}),
    ]
    data = load(write_jsonl(tmp_path / "d.jsonl", lines))
    assert [p.line for p in data.problems] == [2, 3]
    assert "duplicate id" in data.problems[1].message
    assert data.samples[-1].id == "e" and not data.samples[-1].has("answer")


def test_bom_blank_lines_and_invalid_utf8_line(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\n\n\xff\xfe bad\n")
    data = load(path)
    assert [s.id for s in data.samples] == ["a"]
    assert data.problems[0].line == 3 and "UTF-8" in data.problems[0].message


def test_numeric_ids_become_strings(tmp_path: Path) -> None:
    row = {
        "id": 7,
        "retrieved_ids": [1, 3, 4],
        "expected_ids": [1.0, "2"],
        "expected_relevance": {"1": 2},
    }
    (s,) = load(write_jsonl(tmp_path / "d.jsonl", [json.dumps(row)])).samples
    assert (s.id, s.retrieved_ids, s.expected_ids) == ("7", ["1", "3", "4"], ["1", "2"])


def test_each_row_is_hashed_and_numbered_as_it_loads(tmp_path: Path) -> None:
    """Dataset.hashes: what --resume matches a finished result by; the values are those of
    earlier versions (pinned), compact or not; a row rejected is in neither."""
    path = tmp_path / "d.jsonl"
    path.write_text('{"id": "a", "question": "Q?", "answer": "A.", "contexts": ["c1", "c2"]}\n'
                    '{"id": "a"}\n\n{"id": 7, "answer": "六十", "extra": {"k": [1]}}\n',
                    encoding="utf-8")
    for compact in (False, True):
        data = load(path, compact=compact)
        assert data.hashes == {"a": "6750637798520547", "7": "2a60554c0e629c02"}
        assert data.lines == {"a": 1, "7": 4} and [p.line for p in data.problems] == [2]


def test_csv_with_json_list_cells_and_quoting(tmp_path: Path) -> None:
    path = tmp_path / "d.csv"
    path.write_text(
        "id,question,answer,contexts\n"
        'a,"q, with comma","say ""hi""","[""c1"", ""c2""]"\n'
        "b,q,a,plain context\n"
        'c,q,a,"[broken"\n',
        encoding="utf-8",
    )
    data = load(path)
    assert [s.id for s in data.samples] == ["a", "b"]
    assert data.samples[0].contexts == ["c1", "c2"] and data.samples[0].answer == 'say "hi"'
    assert data.samples[1].contexts == ["plain context"]
    assert data.problems[0].line == 4 and "not a valid JSON list" in data.problems[0].message


def test_json_list_and_python_rows(tmp_path: Path) -> None:
    path = tmp_path / "d.json"
    path.write_text(json.dumps([GOOD, 5]), encoding="utf-8")
    data = load(path)
    assert [s.id for s in data.samples] == ["a"] and data.problems[0].line == 2
    assert load([GOOD]).samples[0].id == "a"


def test_unreadable_dataset_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="not found"):
        load(tmp_path / "missing.jsonl")
    (tmp_path / "d.txt").write_text("x")
    with pytest.raises(DatasetError, match="unknown extension"):
        load(tmp_path / "d.txt")
    (tmp_path / "bad.json").write_text("{oops")
    with pytest.raises(DatasetError, match="malformed JSON"):
        load(tmp_path / "bad.json")
