"""A labelled run folder: summary.json and the report carry the corrected figure beside the
judge's, with what it rests on; `compare` of two labelled runs gives the corrected difference."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.results.runfiles import read_json
from tests.test_labels_estimate import N, make_run, truth, write_labels


def _label(run_dir: Path, value=truth, ids=range(0, N, 2)) -> None:  # type: ignore[no-untyped-def]
    write_labels(run_dir / "labels.jsonl",
                 [{"id": f"s{i}", "metric": "faithfulness", "label": value(i), "order": "random"}
                  for i in ids])


def test_report_shows_the_corrected_figure(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                           ) -> None:
    run_dir = make_run(tmp_path / "run")
    assert main(["report", str(run_dir)]) == 0
    assert "labels" not in read_json(run_dir / "summary.json")  # no labels.jsonl: nothing
    assert "Corrected by human labels" not in (run_dir / "report.md").read_text()
    _label(run_dir)
    assert main(["report", str(run_dir)]) == 0
    labels = read_json(run_dir / "summary.json")["labels"]
    f = labels["ppi"]["faithfulness"]
    assert f["n_labels"] == 20 and f["n_rows"] == N
    assert "20 human labels drawn at random among the 40 rows" in f["basis"]
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "## Corrected by human labels" in md and f["basis"] in md
    assert f"{f['mean']:.3f}" in md and f"{f['judge_mean']:.3f}" in md
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "Corrected by human labels" in html and "20 / 40" in html
    (run_dir / "labels.jsonl").unlink()  # labels gone: the stale figures go too
    assert main(["report", str(run_dir)]) == 0
    assert "labels" not in read_json(run_dir / "summary.json")


def test_report_with_unusable_labels_says_why(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = make_run(tmp_path / "run")
    (run_dir / "labels.jsonl").write_text("", encoding="utf-8")
    assert main(["report", str(run_dir)]) == 0
    assert "holds no usable label" in read_json(run_dir / "summary.json")["labels"]["error"]
    assert "holds no usable label" in (run_dir / "report.md").read_text(encoding="utf-8")
    assert "holds no usable label" in capsys.readouterr().err


def test_compare_of_two_labelled_runs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = make_run(tmp_path / "a"), make_run(tmp_path / "b")
    _label(a)
    _label(b, value=lambda i: 1.0)  # B's answers all right on the same samples
    assert main(["compare", str(a), str(b), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (d,) = out["corrected"]
    assert d["key"] == "faithfulness" and d["n_labels"] == 20 and d["n_rows"] == N
    assert d["judge_diff"] == pytest.approx(0.0)  # the judge scored both runs alike
    assert d["labels_only_diff"] == pytest.approx(
        sum(1 - truth(i) for i in range(0, N, 2)) / 20)
    assert d["ci"][0] <= d["diff"] <= d["ci"][1] and d["excludes_zero"] == (d["ci"][0] > 0)
    assert main(["compare", str(a), str(b)]) == 0
    assert "## Corrected by human labels" in capsys.readouterr().out


def test_compare_without_labels_is_unchanged(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    a, b = make_run(tmp_path / "a"), make_run(tmp_path / "b")
    _label(a)
    assert main(["compare", str(a), str(b), "--json"]) == 0
    assert "corrected" not in json.loads(capsys.readouterr().out)


def test_run_resumed_in_a_labelled_folder_writes_the_corrected_figure(
        fake_cli, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    from tests.test_report import ANSWERS, EXAMPLE

    out = tmp_path / "run"
    assert fake_cli(EXAMPLE, ANSWERS, out, metrics="faithfulness,answer_similarity") == 0
    ids = [json.loads(line)["id"] for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    write_labels(out / "labels.jsonl", [{"id": i, "metric": "faithfulness", "label": k % 2}
                                        for k, i in enumerate(ids)])
    assert fake_cli(EXAMPLE, ANSWERS, out, "--resume", metrics="faithfulness,answer_similarity"
                    ) == 0  # nothing left to judge: the summary and report are written again
    f = read_json(out / "summary.json")["labels"]["ppi"]["faithfulness"]
    assert f["n_labels"] == len(ids) == f["n_rows"]
    assert f["basis"] in (out / "report.md").read_text(encoding="utf-8")
