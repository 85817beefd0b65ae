"""A dataset file that yields no sample is a one-line error and a non-zero exit, with what to do
(issue 41 item 13): an empty file, CSV content under a .jsonl name, every row unreadable."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.data.dataset import load, require_samples
from localeval.errors import DatasetError

CASES = {
    "empty.jsonl": ("", "is empty"),
    "blank.jsonl": ("\n  \n", "is empty"),
    "table.jsonl": ('question,answer,contexts\n"Q?","A.","[]"\n', "looks like CSV"),
    "table.json": ("question\tanswer\nQ?\tA.\n", "looks like CSV"),
    "broken.jsonl": ("{bad\n[1, 2\n", "none of its 2 row(s) can be used (line 1: malformed"),
    "header.csv": ("question,answer\n", "no rows to evaluate"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_file_with_no_usable_row_is_one_line_and_exits_non_zero(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str) -> None:
    text, said = CASES[name]
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    if name != "table.json":  # a .json file that is no JSON fails while it is read
        with pytest.raises(DatasetError, match=re.escape(said)):
            require_samples(load(path), path)
    code = main(["run", str(path), "--out", str(tmp_path / "out"), "--judge", "fake",
                 "--metrics", "response_length"])
    err = capsys.readouterr().err.strip()
    assert code != 0 and len(err.splitlines()) == 1 and "Traceback" not in err
    if name != "table.json":
        assert said in err


def test_the_csv_hint_names_the_file_to_rename_to(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text("question,answer\nQ?,A.\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"rename it to rows\.csv"):
        require_samples(load(path), path)


def test_a_file_with_one_good_row_among_bad_ones_still_runs(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text('{bad\n{"id": "a", "answer": "Fine."}\n', encoding="utf-8")
    data = load(path)
    require_samples(data, path)
    assert [s.id for s in data.samples] == ["a"] and len(data.problems) == 1


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-32"])
def test_a_utf16_file_is_named_as_such_with_the_fix(tmp_path: Path, encoding: str) -> None:
    """Issue 53, Low: a UTF-16 (or UTF-32) dataset is named by its encoding, not as bad rows."""
    path = tmp_path / "rows.jsonl"
    path.write_bytes('{"id": "a", "question": "Q?", "answer": "A."}\n'.encode(encoding))
    name = "UTF-32" if "32" in encoding else "UTF-16"
    with pytest.raises(DatasetError, match=f"is {name} text, not UTF-8: save it as UTF-8"):
        require_samples(load(path), path)
