"""`compare A B`: per score the mean difference on the samples both runs scored (paired by id),
its paired bootstrap 95% interval and whether it excludes 0, the samples that moved most,
Markdown/HTML/JSON output, and --max-drop regression gates."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from localeval.cli import main
from localeval.compare import compare_runs, to_markdown
from localeval.records import SampleRecord
from localeval.runfolder import write_json
from localeval.stats import bootstrap_ci


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
    assert (
        main(
            ["compare", a, b, "--max-drop", "faithfulness=0.2", "--max-drop", "answer_similarity=0"]
        )
        == 0
    )
    assert main(["compare", b, a, "--max-drop", "faithfulness=0.01"]) == 0  # an improvement
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
