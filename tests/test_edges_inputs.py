"""Issue 29.4, inputs that used to give a traceback, a hang or a vague message: each is now one
line (or a per-row problem, or a warning) and nothing hangs. The FIFO cases run in a subprocess
with a timeout, so that a regression fails instead of hanging the suite."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.errors import DatasetError

ROW = {"id": "a", "question": "Capital of France?", "contexts": ["Paris is the capital."],
       "answer": "Paris is the capital of France."}
DEEP = "[" * 100_000


def _data(tmp_path: Path, rows: list[dict] | None = None) -> Path:
    path = tmp_path / "d.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows or [ROW]), encoding="utf-8")
    return path


def _run(*argv: str) -> list[str]:
    return ["run", *argv, "--metrics", "response_length", "--quiet"]


def _one_line_error(capsys: pytest.CaptureFixture[str], code: int, *words: str) -> str:
    err = capsys.readouterr().err.strip()
    assert code == 2, err
    assert "Traceback" not in err
    last = err.splitlines()[-1]
    assert "error" in last and all(w in last for w in words), err
    return last


# ---- settings --------------------------------------------------------------------------------

def test_config_folder_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = main(_run(str(_data(tmp_path)), "--out", str(tmp_path / "o"), "--config",
                     str(tmp_path)))
    _one_line_error(capsys, code, "is a folder")


def test_deep_config_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    deep = tmp_path / "deep.toml"
    deep.write_text("metrics = " + DEEP, encoding="utf-8")
    code = main(_run(str(_data(tmp_path)), "--out", str(tmp_path / "o"), "--config", str(deep)))
    _one_line_error(capsys, code, "nested too deeply")


def test_deep_metric_option_is_one_line(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(_run(str(_data(tmp_path)), "--out", str(tmp_path / "o"), "--metric-option",
                  f"response_length.max_words={DEEP}"))
    _one_line_error(capsys, int(info.value.code or 0), "nested too deeply")


def test_no_abbreviated_flags(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--overw` is not `--overwrite`: the resume command printed after Ctrl-C drops
    `--overwrite` by name, so an abbreviation of it must never have been accepted."""
    with pytest.raises(SystemExit) as info:
        main(_run(str(_data(tmp_path)), "--out", str(tmp_path / "o"), "--overw"))
    _one_line_error(capsys, int(info.value.code or 0), "--overw")
    with pytest.raises(SystemExit):
        main(["models", "pull", "--prof", "tiny"])  # nested subcommands too


# ---- run folder files ------------------------------------------------------------------------

def test_deep_run_and_summary_json_are_no_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, out = _data(tmp_path), tmp_path / "o"
    assert main(_run(str(data), "--out", str(out))) == 0
    for name in ("run.json", "summary.json"):
        (out / name).write_text('{"inputs": ' + DEEP, encoding="utf-8")
    capsys.readouterr()
    code = main(_run(str(data), "--out", str(out), "--resume"))
    err = capsys.readouterr().err
    assert "Traceback" not in err and "RecursionError" not in err
    assert code in (0, 2), err  # refused in one line, or resumed
    assert main(["report", str(out)]) in (0, 2)
    assert "Traceback" not in capsys.readouterr().err
    assert main(["compare", str(out), str(out), "--out", str(tmp_path / "cmp")]) in (0, 1, 2)
    assert "Traceback" not in capsys.readouterr().err


def _cli(argv: list[str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`localeval ARGV` in a subprocess importing what this process imports (run elsewhere
    than the checkout, so that `-m` does not put the current folder first)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run([sys.executable, "-m", "localeval", *argv], capture_output=True,
                          text=True, timeout=timeout, env=env, cwd=cwd)


@pytest.mark.parametrize("name", ["results.jsonl", ".localeval.lock", "run.json"])
def test_a_fifo_in_out_is_refused_at_once(tmp_path: Path, name: str) -> None:
    out = tmp_path / "o"
    out.mkdir()
    os.mkfifo(out / name)
    try:
        done = _cli(_run(str(_data(tmp_path)), "--out", str(out)), tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"a FIFO named {name} in --out made the run hang")
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "not a regular file" in done.stderr


# ---- the dataset -------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["fifo", "folder", "device"])
def test_a_dataset_that_is_no_file_is_named_as_such(tmp_path: Path, kind: str) -> None:
    if kind == "fifo":
        path = tmp_path / "rows.jsonl"
        os.mkfifo(path)
        want = "FIFO"
    elif kind == "folder":
        path = tmp_path / "rows.jsonl"
        path.mkdir()
        want = "is a folder"
    else:
        path = Path("/dev/null")
        want = "device"
    try:
        done = _cli(_run(str(path), "--out", str(tmp_path / "o")), tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail(f"a {kind} as the dataset made the run hang")
    assert done.returncode == 2 and want in done.stderr and "not found" not in done.stderr


def test_a_missing_dataset_still_says_not_found(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    code = main(_run(str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o")))
    _one_line_error(capsys, code, "not found")


def test_meta_eval_lone_surrogates_are_row_problems(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pair = {"a": {"question": "q", "answer": "x y"}, "b": {"question": "q", "answer": "z"},
            "preferred": "a", "language": "en"}
    lines = [json.dumps({**pair, "pair_id": "p1"}).replace("p1", "p\\ud800"),
             json.dumps({**pair, "pair_id": "p2", "language": "LANG"}).replace("LANG", "e\\udc80"),
             json.dumps({**pair, "pair_id": "p3", "meta": {"k": "M"}}).replace("M", "\\ud801"),
             json.dumps({**pair, "pair_id": "p4"})]
    data = tmp_path / "pairs.jsonl"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "me"
    assert main(["meta-eval", str(data), "--metrics", "response_length", "--out", str(out),
                 "--quiet"]) == 0
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("not valid Unicode") == 3
    stored = json.loads((out / "meta_eval.json").read_text(encoding="utf-8"))
    assert "p4" in json.dumps(stored)  # the good pair was judged


def test_labelled_row_language_surrogate_is_a_row_problem(tmp_path: Path) -> None:
    from localeval.meta_eval.formats import load

    data = tmp_path / "rows.jsonl"
    data.write_text('{"id": "r1", "answer": "x", "label": 1, "language": "e\\ud800"}\n'
                    '{"id": "r2", "answer": "x", "label": 0, "language": "en"}\n',
                    encoding="utf-8")
    loaded = load(data)
    assert [r.id for r in loaded.rows] == ["r2"]
    assert "not valid Unicode" in str(loaded.problems[0])


# ---- tables ------------------------------------------------------------------------------------

def test_a_dataframe_cell_that_cannot_be_stored_is_a_row_problem(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    import localeval
    from localeval.models.embed import HashEmbedder

    frame = pd.DataFrame({"id": ["a", "b"], "answer": ["one two", "three"],
                          "extra": [object(), "fine"]})
    res = localeval.evaluate(frame, metrics=["response_length"], out=tmp_path / "o",
                             embedder=HashEmbedder(), progress=False)
    assert list(res.scores("response_length")) == ["b"]
    assert "field 'extra'" in str(res.problems[0]) and "cannot be written" in str(res.problems[0])
    assert res.problems[0].line == 1


def test_duplicate_column_names_are_refused(tmp_path: Path) -> None:
    pd = pytest.importorskip("pandas")
    import localeval

    frame = pd.DataFrame([["a", "short", "a much longer answer"]],
                         columns=["id", "answer", "answer"])
    with pytest.raises(DatasetError, match="'answer' appears more than once"):
        localeval.evaluate(frame, metrics=["response_length"], progress=False)
    csv = tmp_path / "d.csv"
    csv.write_text("id,answer,answer\na,short,a much longer answer\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="'answer' appears more than once"):
        localeval.evaluate(csv, metrics=["response_length"], progress=False)


# ---- the answer cache ----------------------------------------------------------------------------

def test_an_unusable_answer_cache_is_a_warning_and_the_run_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "answers.sqlite"
    bad.write_text("not a database", encoding="utf-8")
    answers = tmp_path / "fake.json"
    answers.write_text(json.dumps([{"verdicts": [{"reason": "r", "verdict": 1}]}] * 4),
                       encoding="utf-8")
    out = tmp_path / "o"
    code = main(["run", str(_data(tmp_path)), "--out", str(out), "--judge", "fake",
                 "--fake-answers", str(answers), "--metrics", "faithfulness", "--cache",
                 str(bad), "--quiet"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert "warning" in err and "answers.sqlite" in err and "without it" in err
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert "cannot be used" in summary["judge"]["cache_error"]
    assert summary["metrics"]["faithfulness"]["count"] == 1
    assert bad.read_text(encoding="utf-8") == "not a database"  # left as it was


def test_a_fifo_as_meta_eval_data_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "pairs.jsonl"
    os.mkfifo(path)
    try:
        done = _cli(["meta-eval", str(path), "--metrics", "response_length", "--out",
                     str(tmp_path / "me"), "--quiet"], tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail("a FIFO as meta-eval's labelled data made it hang")
    assert done.returncode == 2 and "FIFO" in done.stderr and "Traceback" not in done.stderr


def test_a_fifo_as_config_is_refused_at_once(tmp_path: Path) -> None:
    path = tmp_path / "c.toml"
    os.mkfifo(path)
    try:
        done = _cli(_run(str(_data(tmp_path)), "--out", str(tmp_path / "o"), "--config",
                         str(path)), tmp_path)
    except subprocess.TimeoutExpired:
        pytest.fail("a FIFO as --config made the run hang")
    assert done.returncode == 2 and "not a regular file" in done.stderr
