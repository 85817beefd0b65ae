"""A run folder + its labels → per-metric corrected estimates; every bad input one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from localeval.errors import LabelsError
from localeval.labels.estimate import estimate_run, run_fingerprint
from localeval.labels.ppi import ppi_mean
from localeval.results.folder import LOCK_FILE
from localeval.results.records import SampleRecord
from localeval.results.runfiles import write_json, write_run_file
from tests.conftest import run_fake

N = 40


def make_run(path: Path, *, complete: bool = True) -> Path:
    """A run folder of N samples: faithfulness with 2 claims each (verdicts 1/0 by sample),
    answer_similarity without claims; run.json gives it a fingerprint."""
    path.mkdir(parents=True)
    records = []
    for i in range(N):
        verdicts = [1, i % 3 != 0]
        statements = [{"statement": f"claim {k} of s{i}", "verdict": int(v)}
                      for k, v in enumerate(verdicts)]
        records.append(SampleRecord(
            id=f"s{i}", line=i + 1, input_hash=f"{i:016x}",
            scores={"faithfulness": sum(verdicts) / 2, "answer_similarity": (i % 10) / 10,
                    "context_recall": None},
            details={"faithfulness": {"sentences": ["a", "b"], "statements": statements}},
            errors={"context_recall": "judge failed"}))
    (path / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records),
                                        encoding="utf-8")
    write_run_file(path, {"metrics_run": ["faithfulness"], "seed": 0})
    write_json(path / "summary.json", {"complete": complete,
                                       "run_fingerprint": run_fingerprint(path)})
    return path


def write_labels(path: Path, rows: list[Any], *, bind: bool = True) -> Path:
    """Write label rows; with `bind`, each dict row of a sample in the results.jsonl beside
    `path` is bound to it as the labelling page binds it (its input_hash and claim text; a row
    that sets input_hash or unbound itself is left as it is; a record without input_hash gets
    "unbound": true)."""
    from localeval.labels.bound import binding, run_content

    content = run_content(path.parent) if bind and (path.parent / "results.jsonl").exists() \
        else {}
    out = []
    for r in rows:
        if isinstance(r, dict) and str(r.get("id")) in content and not (
                {"input_hash", "unbound"} & set(r)):
            have = content[str(r["id"])]
            r = ({**r, "unbound": True} if not have.input_hash else
                 {**r, **binding(have, r["metric"], r.get("claim"))})
        out.append(r if isinstance(r, str) else json.dumps(r))
    path.write_text("".join(line + "\n" for line in out), encoding="utf-8")
    return path


def truth(i: int) -> float:
    """The person's faithfulness of sample i: the judge is right except on every 4th sample."""
    judge = (1 + (i % 3 != 0)) / 2
    return 0.0 if i % 4 == 0 else judge


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return make_run(tmp_path / "run")


def test_sample_labels_give_the_ppi_estimate(run_dir: Path) -> None:
    ids = range(0, N, 2)
    write_labels(run_dir / "labels.jsonl",
                 [{"id": f"s{i}", "metric": "faithfulness", "label": truth(i), "order": "random"}
                  for i in ids])
    est = estimate_run(run_dir)
    judge = [(1 + (i % 3 != 0)) / 2 for i in range(N)]
    expected = ppi_mean(judge, [judge[i] for i in ids], [truth(i) for i in ids])
    assert est.estimates["faithfulness"] == expected
    assert est.not_estimated == {}
    out = est.to_json()["ppi"]["faithfulness"]
    assert out["n_labels"] == 20 and out["n_rows"] == N and len(out["ci"]) == 2


def test_claim_labels_aggregate_only_when_complete(run_dir: Path) -> None:
    rows = []
    for i in range(10):  # every claim labelled: the sample's label is their mean
        rows += [{"id": f"s{i}", "metric": "faithfulness", "claim": 0, "label": 1},
                 {"id": f"s{i}", "metric": "faithfulness", "claim": 1, "label": i % 2}]
    rows.append({"id": "s10", "metric": "faithfulness", "claim": 0, "label": 1})  # one of two
    rows += [{"id": "s11", "metric": "faithfulness", "claim": 0, "label": 1},
             {"id": "s11", "metric": "faithfulness", "claim": 1, "label": None}]  # unsure
    rows += [{"id": "s12", "metric": "faithfulness", "claim": 0, "label": 0},  # sample row wins
             {"id": "s12", "metric": "faithfulness", "claim": 1, "label": 0},
             {"id": "s12", "metric": "faithfulness", "label": 1}]
    write_labels(run_dir / "labels.jsonl", rows)
    est = estimate_run(run_dir)
    e = est.estimates["faithfulness"]
    assert e.n_labels == 11
    assert e.labels_only_mean == pytest.approx((sum(1 + i % 2 for i in range(10)) / 2 + 1) / 11)
    assert any("1 sample(s) have claim labels that do not cover" in n for n in est.notes)
    assert any("1 of the 12 samples drawn at random were marked unsure" in n for n in est.notes)


def test_informative_labels_do_not_enter(run_dir: Path) -> None:
    rows = [{"id": f"s{i}", "metric": "faithfulness", "label": truth(i), "order": "random"}
            for i in range(10)]
    rows += [{"id": f"s{i}", "metric": "faithfulness", "label": 0, "order": "informative"}
             for i in range(20, 30)]
    write_labels(run_dir / "labels.jsonl", rows)
    est = estimate_run(run_dir)
    assert est.estimates["faithfulness"].n_labels == 10
    assert any("10 sample(s) labelled in the informative order" in n for n in est.notes)


def test_labels_without_order_count_as_random_and_are_said_once(run_dir: Path) -> None:
    write_labels(run_dir / "labels.jsonl",
                 [{"id": f"s{i}", "metric": "faithfulness", "label": truth(i)} for i in range(8)])
    est = estimate_run(run_dir)
    assert est.estimates["faithfulness"].n_labels == 8
    assert sum("vouches" in n for n in est.notes) == 1


def test_unknown_ids_duplicates_and_bad_rows_are_one_line_each(run_dir: Path) -> None:
    rows: list[Any] = [{"id": f"s{i}", "metric": "faithfulness", "label": truth(i)}
                       for i in range(8)]
    rows += [{"id": "nope", "metric": "faithfulness", "label": 1},
             {"id": "nope2", "metric": "faithfulness", "label": 1},
             {"id": "s0", "metric": "faithfulness", "label": 1},  # again: the later wins
             {"id": "s1", "metric": "faithfulness", "label": 1.5},  # outside [0, 1]
             "not json"]
    write_labels(run_dir / "labels.jsonl", rows)
    est = estimate_run(run_dir)
    e = est.estimates["faithfulness"]
    assert e.n_labels == 8
    assert e.labels_only_mean == pytest.approx((1 + sum(truth(i) for i in range(1, 8))) / 8)
    assert all("\n" not in n for n in est.notes)
    assert sum("not in" in n and "'nope'" in n for n in est.notes) == 1
    assert sum("later one wins" in n for n in est.notes) == 1
    assert sum("[0, 1]" in n and ":12:" in n for n in est.notes) == 1
    assert sum("not a JSON object" in n and ":13:" in n for n in est.notes) == 1


def test_labels_of_another_run_are_refused(run_dir: Path) -> None:
    write_labels(run_dir / "labels.jsonl",
                 [{"id": f"s{i}", "metric": "faithfulness", "label": 1, "run": "f" * 64}
                  for i in range(5)])
    with pytest.raises(LabelsError, match="labels another run") as info:
        estimate_run(run_dir)
    assert "\n" not in str(info.value)
    mine = run_fingerprint(run_dir)
    write_labels(run_dir / "labels.jsonl",
                 [{"id": f"s{i}", "metric": "faithfulness", "label": truth(i), "run": mine}
                  for i in range(5)] + [{"id": "s9", "metric": "faithfulness", "label": 1,
                                         "run": "f" * 64}])
    est = estimate_run(run_dir)
    assert est.estimates["faithfulness"].n_labels == 5
    assert any("1 row(s) label a run with another fingerprint" in n for n in est.notes)


@pytest.mark.parametrize("content", ["", "\n\n", '{"id": "s1", "metric": "faithfulness"}\n'])
def test_an_empty_labels_file_is_one_line(run_dir: Path, content: str) -> None:
    (run_dir / "labels.jsonl").write_text(content, encoding="utf-8")
    with pytest.raises(LabelsError, match="holds no usable label") as info:
        estimate_run(run_dir)
    assert "\n" not in str(info.value)


def test_missing_labels_file_and_missing_run(tmp_path: Path, run_dir: Path) -> None:
    with pytest.raises(LabelsError, match="not found"):
        estimate_run(run_dir)
    with pytest.raises(LabelsError, match="not a run folder"):
        estimate_run(tmp_path / "nothing", run_dir / "labels.jsonl")


def test_too_few_labels_and_unscored_metrics_are_said(run_dir: Path) -> None:
    write_labels(run_dir / "labels.jsonl", [
        {"id": "s0", "metric": "faithfulness", "label": 1},
        {"id": "s0", "metric": "context_recall", "label": 1},
        {"id": "s1", "metric": "answer_similarity", "label": 0.2},
        {"id": "s2", "metric": "answer_similarity", "label": 0.4},
        {"id": "s3", "metric": "answer_similarity", "label": 0.3},
    ])
    est = estimate_run(run_dir)
    assert "at least 2" in est.not_estimated["faithfulness"]
    assert "no score" in est.not_estimated["context_recall"]
    assert est.estimates["answer_similarity"].n_labels == 3


def test_an_interrupted_run_is_said(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "run", complete=False)
    write_labels(run_dir / "labels.jsonl",
                 [{"id": f"s{i}", "metric": "faithfulness", "label": 1} for i in range(4)])
    assert any("interrupted" in n for n in estimate_run(run_dir).notes)


def test_a_run_still_being_written_is_refused(run_dir: Path) -> None:
    write_labels(run_dir / "labels.jsonl",
                 [{"id": f"s{i}", "metric": "faithfulness", "label": 1} for i in range(4)])
    holder = subprocess.Popen(  # another process holds the run's lock, as a run does
        [sys.executable, "-c", "import fcntl, os, sys, time\n"
         f"fd = os.open({str(run_dir / LOCK_FILE)!r}, os.O_RDWR | os.O_CREAT)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX); os.write(fd, b'4242'); print('held', flush=True)\n"
         "time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        with pytest.raises(LabelsError, match=r"still being written.*4242") as info:
            estimate_run(run_dir)
        assert "\n" not in str(info.value)
    finally:
        holder.kill()
        holder.wait()
    assert estimate_run(run_dir).estimates["faithfulness"].n_labels == 4  # lock released
    assert (run_dir / LOCK_FILE).exists() and os.path.getsize(run_dir / LOCK_FILE) > 0


def test_claim_indices_are_those_of_a_real_run(tmp_path: Path) -> None:
    """Through the runner (fake judge): claim i is details["faithfulness"]["statements"][i]."""
    rows = [{"id": f"r{i}", "question": "When was the tower built?",
             "answer": "It was built in 1889. It is red.",
             "contexts": ["The tower was completed in 1889. It stands in Paris."]}
            for i in range(3)]
    outcome, _ = run_fake(rows, [{"verdicts": [{"verdict": 1}]}] * 6, out_dir=tmp_path / "run",
                          metrics=["faithfulness"])
    assert [len(r.details["faithfulness"]["statements"]) for r in outcome.records] == [2, 2, 2]
    write_labels(tmp_path / "run" / "labels.jsonl", [
        {"id": f"r{i}", "metric": "faithfulness", "claim": k, "label": 1 - k, "order": "random"}
        for i in range(3) for k in range(2)])
    est = estimate_run(tmp_path / "run")
    e = est.estimates["faithfulness"]
    judge = [r.scores["faithfulness"] for r in outcome.records]
    assert (e.n_labels, e.n_rows, e.labels_only_mean) == (3, 3, 0.5)
    assert e.judge_mean == pytest.approx(sum(judge) / 3)


def test_meta_eval_labels_json_through_the_cli(run_dir: Path) -> None:
    write_labels(run_dir / "mine.jsonl",
                 [{"id": f"s{i}", "metric": "faithfulness", "label": truth(i), "order": "random"}
                  for i in range(0, N, 2)] + [{"id": "ghost", "metric": "faithfulness",
                                                "label": 1}])
    done = subprocess.run(
        [sys.executable, "-m", "localeval", "meta-eval", str(run_dir), "--labels",
         str(run_dir / "mine.jsonl"), "--json"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)  # one JSON object, nothing else on stdout
    f = out["ppi"]["faithfulness"]
    assert set(f) >= {"mean", "ci", "n_labels", "judge_mean", "labels_only_ci",
                      "labels_only_mean", "effective_labels", "n_rows"}
    assert f["n_labels"] == 20 and f["n_rows"] == N
    assert f["ci"][0] <= f["mean"] <= f["ci"][1]
    assert f["ci"][1] - f["ci"][0] <= f["labels_only_ci"][1] - f["labels_only_ci"][0]
    assert "'ghost'" in done.stderr and "Traceback" not in done.stderr
    table = subprocess.run(
        [sys.executable, "-m", "localeval", "meta-eval", str(run_dir), "--labels",
         str(run_dir / "mine.jsonl")], capture_output=True, text=True, timeout=120)
    assert table.returncode == 0 and "corrected" in table.stdout and "20/40" in table.stdout
    assert "\\x0a" not in table.stdout and len(table.stdout.splitlines()) == 3


def test_meta_eval_labels_bad_input_is_one_line(run_dir: Path) -> None:
    (run_dir / "empty.jsonl").write_text("", encoding="utf-8")
    for extra, words in ((["--labels", str(run_dir / "empty.jsonl")], "no usable label"),
                         (["--labels", str(run_dir / "empty.jsonl"), "--out", "x"],
                          "--out do(es) not go with --labels"),
                         (["--json", "--out", "x"], "--json goes with --labels")):
        done = subprocess.run([sys.executable, "-m", "localeval", "meta-eval", str(run_dir),
                               *extra], capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and words in done.stderr
        assert done.stderr.count("\n") == 1 and done.stdout == ""
