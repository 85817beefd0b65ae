"""`compare A B`: per score the mean difference on the samples both runs scored (paired by id),
its paired bootstrap 95% interval and whether it excludes 0, the samples that moved most,
Markdown/HTML/JSON output, and --max-drop regression gates."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from localeval.cli import main
from localeval.report.compare import compare_runs, to_markdown
from localeval.results.records import SampleRecord
from localeval.results.runfiles import write_json
from localeval.results.tally import bootstrap_ci


def make_run(
    path: Path, scores: dict[str, dict[str, float | None]], settings: dict | None = None
) -> Path:
    """A run folder from {sample id: {score key: value}}."""
    path.mkdir(parents=True)
    records = [
        SampleRecord(id=sid, line=i, question=f"q {sid}", scores=s)
        for i, (sid, s) in enumerate(scores.items(), 1)
    ]
    (path / "results.jsonl").write_text(
        "".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8"
    )
    write_json(
        path / "summary.json",
        {
            "settings": settings or {"max_tokens": 768},
            "models": {"judge": {"name": "m", "sha256": "abc"}},
        },
    )
    return path


@pytest.fixture
def runs(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(1)
    base = rng.uniform(0.2, 0.8, size=30)
    noise = rng.normal(0, 0.02, size=30)
    a = {f"s{i}": {"faithfulness": float(base[i]), "answer_similarity": 0.5} for i in range(30)}
    b = {
        f"s{i}": {"faithfulness": float(base[i] - 0.1 + noise[i]), "answer_similarity": 0.5}
        for i in range(30)
    }
    a["only-a"] = {"faithfulness": 0.9}
    b["s3"]["faithfulness"] = None  # unscored in B: not paired
    b["s7"]["faithfulness"] = float(base[7] + 0.3)  # the biggest mover
    return (make_run(tmp_path / "a", a), make_run(tmp_path / "b", b, {"max_tokens": 512}))


def test_paired_difference_and_interval(runs: tuple[Path, Path]) -> None:
    c = compare_runs(*runs)
    row = next(r for r in c.rows if r.key == "faithfulness")
    assert row.n == 29 and row.only_a == 2 and row.only_b == 0  # s3 and only-a unpaired
    a = {r.id: r.scores["faithfulness"] for r in c.a.records}
    b = {r.id: r.scores["faithfulness"] for r in c.b.records}
    diffs = [b[i] - a[i] for i in a if b.get(i) is not None]
    assert row.diff == pytest.approx(np.mean(diffs))
    assert row.ci95 == pytest.approx(list(bootstrap_ci(diffs)))
    assert row.ci95[0] < row.diff < row.ci95[1] < 0  # a clear drop
    assert row.excludes_zero and row.verdict == "worse"
    # pairing matters: the paired interval is much narrower than the spread of either run
    assert row.ci95[1] - row.ci95[0] < 0.1
    assert row.movers[0].id == "s7" and row.movers[0].delta == pytest.approx(0.3)
    same = next(r for r in c.rows if r.key == "answer_similarity")
    assert same.diff == 0 and same.ci95 == [0.0, 0.0] and not same.excludes_zero
    assert same.verdict == "no clear change" and same.movers == []
    assert "settings max_tokens: 768 → 512" in c.differences


def test_a_rise_in_a_lower_is_better_score_is_worse(tmp_path: Path) -> None:
    """refusal declares higher_is_better=False: more refusals is worse, fewer is better."""
    a = {f"s{i}": {"refusal": 0.0, "faithfulness": 0.0} for i in range(20)}
    b = {f"s{i}": {"refusal": 1.0, "faithfulness": 1.0} for i in range(20)}
    rows = {r.key: r for r in compare_runs(make_run(tmp_path / "a", a),
                                           make_run(tmp_path / "b", b)).rows}
    assert rows["refusal"].diff == 1.0 and rows["refusal"].verdict == "worse"
    assert rows["faithfulness"].diff == 1.0 and rows["faithfulness"].verdict == "better"
    back = {r.key: r for r in compare_runs(tmp_path / "b", tmp_path / "a").rows}
    assert back["refusal"].verdict == "better" and back["faithfulness"].verdict == "worse"


def test_compare_cli_prints_the_paired_ci_and_writes_files(
    runs: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cmp"
    assert main(["compare", str(runs[0]), str(runs[1]), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    row = next(r for r in compare_runs(*runs).rows if r.key == "faithfulness")
    assert "95% CI (paired bootstrap)" in printed
    assert (
        f"| faithfulness | 29 | {row.mean_a:.3f} | {row.mean_b:.3f} | {row.diff:+.3f} | "
        f"[{row.ci95[0]:.3f}, {row.ci95[1]:.3f}] | yes | worse |" in printed
    )
    assert "## Samples that moved most" in printed and "| s7 |" in printed
    assert printed == (out / "compare.md").read_text()
    page = (out / "compare.html").read_text()
    assert "<script" not in page and page.count('class="dot"') == 2
    data = json.loads((out / "compare.json").read_text())
    assert data["scores"][0]["key"] == "faithfulness" and data["scores"][0]["excludes_zero"] is True


def test_compare_json(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["compare", str(runs[0]), str(runs[1]), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {s["key"] for s in data["scores"]} == {"faithfulness", "answer_similarity"}


def test_max_drop_gates(runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    a, b = map(str, runs)
    assert main(["compare", a, b, "--max-drop", "faithfulness=0.05"]) == 1
    err = capsys.readouterr().err
    assert "gate failed: faithfulness dropped by 0.0" in err and "on 29 paired samples" in err
    allow = ["--max-unpaired", "2"]  # only-a, and s3 unscored in B
    assert main(["compare", a, b, "--max-drop", "faithfulness=0.2",
                 "--max-drop", "answer_similarity=0", *allow]) == 0
    assert main(["compare", b, a, "--max-drop", "faithfulness=0.01", *allow]) == 0  # improvement
    capsys.readouterr()
    assert main(["compare", a, b, "--max-drop", "faithfulnes=0.1"]) == 2
    assert "did you mean 'faithfulness'" in capsys.readouterr().err


def test_compare_needs_run_folders(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "empty").mkdir()
    assert main(["compare", str(tmp_path / "empty"), str(tmp_path / "nope")]) == 2
    assert "not a run folder" in capsys.readouterr().err


def test_no_paired_samples(tmp_path: Path) -> None:
    a = make_run(tmp_path / "a", {"x": {"faithfulness": 1.0}})
    b = make_run(tmp_path / "b", {"y": {"faithfulness": 0.0}})
    c = compare_runs(a, b)
    assert c.rows[0].n == 0 and c.rows[0].diff is None and c.rows[0].verdict == "no paired samples"
    assert "| faithfulness | 0 | - | - | - | - | no |" in to_markdown(c)


def test_unpaired_samples_fail_a_max_drop_gate_past_the_allowance(
    runs: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    a, b = map(str, runs)
    assert main(["compare", a, b, "--max-drop", "faithfulness=0.2"]) == 1
    err = capsys.readouterr().err
    assert "2 sample(s) scored in one run only (2 only in A, 0 only in B)" in err
    assert "--max-unpaired 2" in err
    assert main(["compare", a, b, "--max-drop", "faithfulness=0.2", "--max-unpaired", "1"]) == 1


def test_runs_of_different_datasets_are_refused(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    a = make_run(tmp_path / "a", {"1": {"faithfulness": 0.9}, "2": {"faithfulness": 0.8}})
    b = make_run(tmp_path / "b", {"1": {"faithfulness": 0.1}, "2": {"faithfulness": 0.2}})
    lines = (b / "results.jsonl").read_text(encoding="utf-8").replace('"q 2"', '"other"')
    (b / "results.jsonl").write_text(lines, encoding="utf-8")
    assert main(["compare", str(a), str(b), "--max-drop", "faithfulness=0.05"]) == 2
    err = capsys.readouterr().err
    assert "runs of different datasets: 1 id(s) hold another question in B (e.g. id '2')" in err
    assert main(["compare", str(a), str(b), "--allow-different-datasets",
                 "--out", str(tmp_path / "c")]) == 0
    assert "warning: 1 id(s) hold another question in B" in capsys.readouterr().err
    data = json.loads((tmp_path / "c" / "compare.json").read_text(encoding="utf-8"))
    assert data["ids_with_other_questions"] == ["2"]
    assert data["scores"][0]["n"] == 1  # id 2 is left out


def test_a_nan_score_is_an_error_not_a_pass(tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    a = make_run(tmp_path / "a", {"x": {"faithfulness": 0.9}, "y": {"faithfulness": 0.9}})
    b = make_run(tmp_path / "b", {"x": {"faithfulness": 0.9}, "y": {"faithfulness": 0.9}})
    text = (b / "results.jsonl").read_text(encoding="utf-8")
    (b / "results.jsonl").write_text(text.replace("0.9}", "NaN}", 1), encoding="utf-8")
    out = tmp_path / "c"
    assert main(["compare", str(a), str(b), "--max-drop", "faithfulness=0.05",
                 "--out", str(out)]) == 1  # one sample unpaired, not a silent pass
    err = capsys.readouterr().err
    assert "not a finite number" in err and "1 only in A" in err
    json.loads((out / "compare.json").read_text(encoding="utf-8"))  # strict JSON
    assert "NaN" not in (out / "compare.json").read_text(encoding="utf-8")
    assert main(["report", str(b)]) == 0  # the report renders, the NaN counted as an error
    assert "not a finite number" in capsys.readouterr().err


def test_an_unwritable_compare_out_is_one_line(runs: tuple[Path, Path], tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x", encoding="utf-8")
    a, b = map(str, runs)
    assert main(["compare", a, b, "--out", str(blocker / "sub")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("localeval: error: cannot create") and "Traceback" not in "".join(err)


def test_a_negative_allowance_is_a_usage_error(runs: tuple[Path, Path],
                                               capsys: pytest.CaptureFixture[str]) -> None:
    a, b = map(str, runs)
    with pytest.raises(SystemExit) as exit_:
        main(["compare", a, b, "--max-unpaired", "-1"])
    assert exit_.value.code == 2 and "must be 0 or more" in capsys.readouterr().err


def test_a_change_on_a_few_pairs_says_it_is_too_few_to_be_sure(tmp_path: Path) -> None:
    """A Low item of issue 41: three pairs that all dropped were called "worse" outright."""
    a = {f"s{i}": {"faithfulness": 0.9} for i in range(3)}
    b = {f"s{i}": {"faithfulness": 0.8 - i / 100} for i in range(3)}
    row = compare_runs(make_run(tmp_path / "a", a), make_run(tmp_path / "b", b)).rows[0]
    assert row.excludes_zero and row.small
    assert row.verdict == "worse? (only 3 pairs: too few to be sure)"
    assert compare_runs(tmp_path / "a", tmp_path / "b").to_json()["scores"][0]["few_pairs"]
