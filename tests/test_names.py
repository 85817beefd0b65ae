"""Issue 18.10: a lone surrogate in an id, or a dataset/--out name that is not UTF-8, used to end
a run with a traceback and no summary (and `--resume` crashed the same way).

An id holding a lone surrogate is rejected as a row problem naming its line, the surrogate shown
escaped: an id must round-trip through results.jsonl (UTF-8) for --resume and compare, and
escaping it into an id would make "\\ud800" and the literal text "\\\\ud800" the same sample.
A non-UTF-8 file name works; it is shown with its bytes as \\xNN."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from localeval.cli import main
from tests.conftest import fake_run_args

GOOD = {"id": "g", "question": "q?", "answer": "Paris is in France.",
        "contexts": ["Paris is in France."]}  # fmt: skip
ANSWERS = [{"statements": [["Paris is in France."]]},
           {"verdicts": [{"reason": "ok", "verdict": 1}]}]


def answers_file(tmp_path: Path) -> Path:
    path = tmp_path / "answers.json"
    path.write_text(json.dumps(ANSWERS * 2), encoding="utf-8")
    return path


def run_cli(data: str, out: str, answers: Path, *extra: str, quiet: bool = False) -> int:
    argv = fake_run_args(Path(data), answers, Path(out), *extra)
    return main(argv if quiet else [a for a in argv if a != "--quiet"])


def test_a_lone_surrogate_id_is_one_row_problem_and_resume_works(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d.jsonl"
    bad = '{"id": "\\ud800", "question": "q?", "answer": "a.", "contexts": ["c."]}'
    data.write_text(bad + "\n" + json.dumps(GOOD) + "\n", encoding="utf-8")
    out = tmp_path / "out"
    answers = answers_file(tmp_path)
    assert run_cli(str(data), str(out), answers) == 0
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    problem = [ln for ln in captured.err.splitlines() if "line 1" in ln]
    assert len(problem) == 1 and "\\ud800" in problem[0] and "not valid Unicode" in problem[0]
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert summary["dataset"]["input_errors"][0]["id"] == "\\ud800"
    assert summary["metrics"]["faithfulness"]["count"] == 1
    assert (out / "report.md").is_file() and (out / "report.html").is_file()
    assert run_cli(str(data), str(out), answers, "--resume") == 0
    assert "Traceback" not in capsys.readouterr().err
    assert len((out / "results.jsonl").read_text(encoding="utf-8").splitlines()) == 1


@pytest.mark.parametrize(
    "raw", [b"latin1-caf\xe9", "中文数据".encode("gbk")], ids=["latin1", "gbk"]
)
def test_a_dataset_and_out_folder_named_in_another_encoding_work(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], raw: bytes
) -> None:
    base = os.fsencode(tmp_path)
    data = base + b"/" + raw + b".jsonl"
    with open(data, "wb") as f:
        f.write(json.dumps(GOOD).encode() + b"\n")
    out = os.fsdecode(base + b"/out-" + raw)  # what sys.argv holds for such a name
    answers = answers_file(tmp_path)
    assert run_cli(os.fsdecode(data), out, answers) == 0  # not quiet: the paths are printed
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    shown = "".join(f"\\x{b:02x}" if b > 0x7F else chr(b) for b in raw)
    assert shown in captured.out  # the --out name, bytes shown as \xNN
    summary = json.loads(Path(out, "summary.json").read_text(encoding="utf-8"))
    assert summary["dataset"]["source"].endswith(shown + ".jsonl")
    assert summary["metrics"]["faithfulness"]["count"] == 1
    assert run_cli(os.fsdecode(data), out, answers, "--resume") == 0
    assert "Traceback" not in capsys.readouterr().err


def test_a_missing_dataset_with_a_non_utf8_name_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = os.fsdecode(os.fsencode(tmp_path) + b"/caf\xe9.jsonl")
    assert run_cli(data, str(tmp_path / "out"), answers_file(tmp_path), quiet=True) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "caf\\xe9.jsonl not found" in err
