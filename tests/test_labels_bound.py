"""Issue 53 items 1 and 5: a human label is bound to the content it judged (the sample's
input_hash, and a claim label to the claim's text); a label of other content is left out of the
estimate, the report, `meta-eval --labels` and `compare`, counted by why; and samples of the
random draw marked unsure are said to leave the draw."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.errors import LabelsError
from localeval.labels.estimate import estimate_run
from localeval.labels.store import read_labels
from localeval.results.runfiles import read_json
from tests.test_label_page import FAKE, ROWS
from tests.test_labels_estimate import N, make_run, truth, write_labels


def _run(tmp_path: Path, rows: list[dict], out: Path, *extra: str) -> int:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(FAKE), encoding="utf-8")
    return main(["run", str(data), "--out", str(out), "--judge", "fake", "--fake-answers",
                 str(answers), "--metrics", "faithfulness", "--no-cache", "--quiet", *extra])


def test_relabelled_folder_does_not_claim_the_old_labels(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    """`run NEW.jsonl --out LABELLED --overwrite`: the labels judged the old answers."""
    out = tmp_path / "run"
    assert _run(tmp_path, ROWS, out) == 0
    write_labels(out / "labels.jsonl", [{"id": r["id"], "metric": "faithfulness",
                                         "label": 1, "order": "random"} for r in ROWS])
    assert main(["report", str(out)]) == 0
    assert "4 / 4" in (out / "report.html").read_text(encoding="utf-8")  # bound: used
    new = [{**r, "question": r["question"] + " Asked anew."} for r in ROWS]
    assert _run(tmp_path, new, out, "--overwrite") == 0
    labels = read_json(out / "summary.json")["labels"]
    assert "ppi" not in labels and "4 label(s) judged another version" in labels["error"]
    for name in ("report.md", "report.html"):
        text = (out / name).read_text(encoding="utf-8")
        assert "4 / 4" not in text and "judged another version" in text
    assert "judged another version" in capsys.readouterr().err


def test_half_relabelled_run_uses_only_the_labels_of_unchanged_samples(tmp_path: Path) -> None:
    out = tmp_path / "run"
    assert _run(tmp_path, ROWS, out) == 0
    write_labels(out / "labels.jsonl", [{"id": r["id"], "metric": "faithfulness",
                                         "label": 1, "order": "random"} for r in ROWS])
    new = [{**r, "question": r["question"] + " (edited)"} if k < 2 else r
           for k, r in enumerate(ROWS)]
    assert _run(tmp_path, new, out, "--overwrite") == 0
    labels = read_json(out / "summary.json")["labels"]
    assert labels["ppi"]["faithfulness"]["n_labels"] == 2
    assert labels["dropped"] == {"changed": 2}
    assert any("2 label(s) judged another version" in n for n in labels["notes"])


def test_rows_without_a_binding_are_not_used_unless_they_say_unbound(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "run")
    rows = [{"id": f"s{i}", "metric": "faithfulness", "label": truth(i)} for i in range(10)]
    write_labels(run_dir / "labels.jsonl", rows, bind=False)  # hand-written, no input_hash
    with pytest.raises(LabelsError, match=r"10 label\(s\) carry no input_hash") as info:
        estimate_run(run_dir)
    assert "\n" not in str(info.value)
    write_labels(run_dir / "labels.jsonl", rows[:6] + [{**r, "unbound": True} for r in rows[6:]],
                 bind=False)
    est = estimate_run(run_dir)
    assert est.estimates["faithfulness"].n_labels == 4
    assert any("6 label(s) carry no input_hash" in n for n in est.notes)
    assert any("4 label(s) say unbound" in n for n in est.notes)


def test_a_claim_label_is_bound_to_the_claim_text(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "run")
    rows = [{"id": f"s{i}", "metric": "faithfulness", "claim": k, "label": 1}
            for i in range(6) for k in range(2)]
    write_labels(run_dir / "labels.jsonl", rows)
    assert estimate_run(run_dir).estimates["faithfulness"].n_labels == 6
    bound = [json.loads(x) for x in (run_dir / "labels.jsonl").read_text().splitlines()]
    assert bound[1]["statement"] == "claim 1 of s0" and bound[1]["input_hash"] == f"{0:016x}"
    bound[1]["statement"] = "a claim the run does not have"  # same sample, another claim
    (run_dir / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bound))
    est = estimate_run(run_dir)
    assert est.estimates["faithfulness"].n_labels == 5
    assert any("1 label(s) judged a claim the sample no longer has" in n for n in est.notes)


def test_a_later_label_of_other_content_does_not_replace_a_bound_one(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "run")
    path = write_labels(run_dir / "labels.jsonl",
                        [{"id": "s0", "metric": "faithfulness", "label": 1}])
    with path.open("a") as f:
        f.write(json.dumps({"id": "s0", "metric": "faithfulness", "label": 0,
                            "input_hash": "0" * 15 + "9"}) + "\n")
    from localeval.labels.bound import checker, run_content

    read = read_labels(path, check=checker(run_content(run_dir)))
    assert read.labels[("s0", "faithfulness", None)].label == 1 and read.dropped == {"changed": 1}


def _other_content(tmp_path: Path) -> tuple[Path, Path]:
    """Run A labelled; run B: the same ids and settings, samples s0–s9 with other answers."""
    a, b = make_run(tmp_path / "a"), make_run(tmp_path / "b")
    lines = (b / "results.jsonl").read_text().splitlines()
    for k in range(10):
        record = json.loads(lines[k])
        record["input_hash"] = "f" * 16
        lines[k] = json.dumps(record)
    (b / "results.jsonl").write_text("".join(x + "\n" for x in lines))
    return a, b


def test_meta_eval_skips_or_refuses_labels_of_other_answers(tmp_path: Path) -> None:
    a, b = _other_content(tmp_path)
    write_labels(a / "labels.jsonl", [{"id": f"s{i}", "metric": "faithfulness",
                                       "label": truth(i), "order": "random"} for i in range(20)])
    done = subprocess.run([sys.executable, "-m", "localeval", "meta-eval", str(b), "--labels",
                           str(a / "labels.jsonl"), "--json"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["ppi"]["faithfulness"]["n_labels"] == 10 and out["dropped"] == {"changed": 10}
    assert "10 label(s) judged another version" in done.stderr
    write_labels(a / "labels.jsonl", [{"id": f"s{i}", "metric": "faithfulness",
                                       "label": truth(i), "order": "random"} for i in range(10)])
    done = subprocess.run([sys.executable, "-m", "localeval", "meta-eval", str(b), "--labels",
                           str(a / "labels.jsonl")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert "holds no label of the content" in done.stderr
    assert "10 label(s) judged another version" in done.stderr


def test_compare_skips_labels_of_other_answers_with_a_count(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _other_content(tmp_path)
    rows = [{"id": f"s{i}", "metric": "faithfulness", "label": truth(i), "order": "random"}
            for i in range(0, N, 2)]
    write_labels(a / "labels.jsonl", rows)
    write_labels(b / "labels.jsonl", rows)
    # B's labels were bound to B's old answers: rewrite them as if written before the change
    lines = [json.loads(x) for x in (b / "labels.jsonl").read_text().splitlines()]
    for row in lines:
        row["input_hash"] = f"{int(row['id'][1:]):016x}"
    (b / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    assert main(["compare", str(a), str(b), "--json"]) == 0
    said = capsys.readouterr()
    (d,) = json.loads(said.out)["corrected"]
    assert d["n_labels"] == 15  # s0, s2, …, s8 of B changed: their labels left out
    err = said.err
    assert "note: B: " in err and "5 label(s) judged another version" in err


def test_unsure_among_the_random_draw_is_said(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 53 item 11: 6 of 12 random labels unsure moved the estimate with no note."""
    run_dir = make_run(tmp_path / "run")
    rows = [{"id": f"s{i}", "metric": "faithfulness", "label": truth(i) if i < 6 else None,
             "order": "random"} for i in range(12)]
    write_labels(run_dir / "labels.jsonl", rows)
    est = estimate_run(run_dir)
    assert est.estimates["faithfulness"].n_labels == 6 and est.unsure == {"faithfulness": 6}
    note = next(n for n in est.notes if "marked unsure" in n)
    assert "6 of the 12 samples drawn at random" in note and "no longer a uniform" in note
    assert "conditional" in note and "biased" in note
    assert main(["report", str(run_dir)]) == 0
    f = read_json(run_dir / "summary.json")["labels"]["ppi"]["faithfulness"]
    assert f["unsure"] == 6 and "no longer uniform" in f["basis"]
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "no longer uniform" in md and "6 of the 12 samples drawn at random" in md
