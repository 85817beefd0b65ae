"""Issue 29.4, scores and comparisons: a finite out-of-range score (1e308) edited into
results.jsonl is no score (no `inf` mean that passes a gate, no crash in compare); `compare
--out` leaves another tool's compare files alone; rows without a question are not paired by
their default ids."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.results.records import SampleRecord


def _run(tmp_path: Path, name: str, rows: list[dict]) -> Path:
    data = tmp_path / f"{name}.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / name
    assert main(["run", str(data), "--out", str(out), "--metrics", "response_length",
                 "--quiet"]) == 0
    return out


ROWS = [{"id": f"s{i}", "question": f"q{i}?", "answer": "word " * (5 + 60 * (i % 3))}
        for i in range(6)]


def _forge(out: Path, value: str) -> None:
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[0])
    record["scores"]["response_length"] = "VALUE"
    lines[0] = json.dumps(record).replace('"VALUE"', value)
    (out / "results.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.mark.parametrize("value", [1e308, -5.0, 1.5])
def test_an_out_of_range_score_is_no_score(value: float) -> None:
    record = SampleRecord(id="a", scores={"faithfulness": value, "faithfulness.weighted": 0.5})
    assert record.scores == {"faithfulness": None, "faithfulness.weighted": 0.5}
    assert "outside [0, 1]" in record.errors["faithfulness"]


def test_rounding_at_the_edges_is_kept() -> None:
    record = SampleRecord(id="a", scores={"answer_similarity.cosine": 1.0000001, "x": -1e-9})
    assert record.scores == {"answer_similarity.cosine": 1.0000001, "x": -1e-9}
    assert not record.errors


def test_1e308_in_results_fails_the_gate(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(tmp_path, "a", ROWS)
    _forge(out, "1e308")
    capsys.readouterr()
    code = main(["report", str(out), "--fail-under", "response_length=0.9"])
    printed = capsys.readouterr()
    assert code == 1, printed.err  # was 0: the mean was 1.7e307
    assert "1 errors" in printed.err and "not a finite number in [0, 1]" in printed.err
    row = next(ln for ln in printed.out.splitlines() if ln.startswith("response_length"))
    assert 0 <= float(row.split()[1]) <= 1


def test_compare_survives_1e308(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _run(tmp_path, "a", ROWS), _run(tmp_path, "b", ROWS)
    _forge(b, "1e308")
    code = main(["compare", str(a), str(b), "--out", str(tmp_path / "cmp")])
    err = capsys.readouterr().err
    assert code == 0 and "Traceback" not in err
    data = json.loads((tmp_path / "cmp" / "compare.json").read_text(encoding="utf-8"))
    assert data["scores"][0]["n"] == len(ROWS) - 1


def test_compare_out_leaves_another_tools_files_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = _run(tmp_path, "a", ROWS), _run(tmp_path, "b", ROWS)
    for name in ("compare.md", "compare.json"):
        theirs = tmp_path / f"theirs-{name}"
        theirs.mkdir()
        (theirs / name).write_text("someone else's\n", encoding="utf-8")
        assert main(["compare", str(a), str(b), "--out", str(theirs)]) == 2
        assert "not written by localeval compare" in capsys.readouterr().err
        assert (theirs / name).read_text(encoding="utf-8") == "someone else's\n"
        assert len(list(theirs.iterdir())) == 1
    ours = tmp_path / "ours"
    assert main(["compare", str(a), str(b), "--out", str(ours)]) == 0
    assert main(["compare", str(b), str(a), "--out", str(ours)]) == 0  # ours: rewritten
    assert json.loads((ours / "compare.json").read_text(encoding="utf-8"))["a"] == str(b)


def test_rows_without_question_or_id_are_not_paired(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    one = [{"answer": "short answer"}, {"answer": "word " * 150}]
    other = [{"answer": "word " * 150}, {"answer": "short answer"}]  # another dataset
    a, b = _run(tmp_path, "a", one), _run(tmp_path, "b", other)
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--json"]) == 0
    out = capsys.readouterr()
    data = json.loads(out.out)
    assert data["scores"][0]["n"] == 0 and sorted(data["default_ids_not_paired"]) == [
        "row-1", "row-2"]
    assert "neither an id nor a question" in out.err
    named = [{"id": "x", **one[0]}, {"id": "y", **one[1]}]  # ids given: paired
    c, d = _run(tmp_path, "c", named), _run(tmp_path, "d", named)
    assert main(["compare", str(c), str(d), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["scores"][0]["n"] == 2
