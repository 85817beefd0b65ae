"""Class labels (labels/classes.py): a person's diagnosis class of each claim, bound to the
sample's input_hash and the claim's text, gives the sample a person's value of each diagnosis
score of its side, and PPI corrects the judge's diagnosis means with them (labels/estimate.py),
over rows. The judge is tests/test_diagnosis.py's oracle: its classes of ROW's claims are known
exactly, the person's are set here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from localeval.labels.classes import ANSWER, ANSWER_CLAIMS, OWNERS, TRUTH, TRUTH_CLAIMS, share
from localeval.labels.store import Label, append_label, read_labels
from tests.test_diagnosis import ROW, _oracle_run
from tests.test_labels_estimate import write_labels

JUDGE_ANSWER = ["supported", "noise_irrelevant", "hallucination", "self_knowledge",
                "noise_relevant"]
"""The oracle's classes of ROW's five answer claims (tests/test_diagnosis.py)."""
JUDGE_TRUTH = ["used", "not_retrieved", "not_retrieved", "unused"]
SHORT = "Paris is the capital city of France."  # one answer claim: supported


def test_the_classes_are_the_matrix_s_and_the_owners_the_report_s() -> None:
    from localeval.metrics.claims.matrix import ANSWER_CLASSES, TRUTH_CLASSES
    from localeval.report.diagnosis import ANSWER_OWNERS, TRUTH_OWNERS

    assert set(ANSWER) == set(ANSWER_CLASSES) and set(TRUTH) == set(TRUTH_CLASSES)
    assert OWNERS[ANSWER_CLAIMS] == ANSWER_OWNERS and OWNERS[TRUTH_CLAIMS] == TRUTH_OWNERS


def test_a_person_s_classes_give_the_scores_by_the_judge_s_formula() -> None:
    assert share("hallucination", JUDGE_ANSWER) == 0.2
    assert share("noise_sensitivity", JUDGE_ANSWER) == 0.4
    assert share("noise_sensitivity.relevant", JUDGE_ANSWER) == 0.2
    assert share("noise_sensitivity.irrelevant", JUDGE_ANSWER) == 0.2
    assert share("self_knowledge", JUDGE_ANSWER) == 0.2
    assert share("claim_recall", JUDGE_TRUTH) == 0.5
    assert share("context_utilization", JUDGE_TRUTH) == 0.5
    assert share("context_utilization", ["not_retrieved"]) is None  # nothing retrieved
    assert share("context_utilization", ["retrieved", "used"]) is None  # the answer not read
    assert share("claim_recall", ["retrieved", "not_retrieved"]) == 0.5
    assert share("hallucination", []) is None


def _row(**extra: Any) -> dict[str, Any]:
    return {"id": "s", "claim": 0, "label": 1, "order": "random", "input_hash": "h",
            "statement": "x", **extra}


def test_a_class_label_row_is_checked_when_read(tmp_path: Path) -> None:
    rows = [
        _row(metric=ANSWER_CLAIMS, **{"class": "hallucination"}),  # line 1: good
        _row(metric=ANSWER_CLAIMS, claim=1, label=None),  # 2: unsure, no class: good
        _row(metric=ANSWER_CLAIMS, claim=2, **{"class": "used"}),  # 3: a truth class
        _row(metric="faithfulness", claim=3, **{"class": "hallucination"}),  # 4
        _row(metric=TRUTH_CLAIMS, claim=None, **{"class": "used"}),  # 5: no claim
        _row(metric=TRUTH_CLAIMS, claim=4, label=0, **{"class": "used"}),  # 6: label 0
        _row(metric=TRUTH_CLAIMS, claim=5),  # 7: no class, label 1
    ]
    path = tmp_path / "labels.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    read = read_labels(path)
    assert [(k[2], v.klass) for k, v in read.labels.items()] == [(0, "hallucination"),
                                                                 (1, None)]
    problems = "\n".join(read.problems)
    assert [p.split(":")[1] for p in read.problems] == ["3", "4", "5", "6", "7"]
    assert "'used' is no class of diagnosis.answer_claims" in problems
    assert "only a class label has one" in problems
    assert "give the claim's index" in problems
    assert "a class label says 1" in problems
    assert "names the claim's class" in problems
    # written back under its own name
    out = tmp_path / "again.jsonl"
    append_label(out, read.labels[("s", ANSWER_CLAIMS, 0)])
    assert json.loads(out.read_text(encoding="utf-8"))["class"] == "hallucination"


def _answer_of(i: int) -> str:
    return ROW["answer"] if i % 2 else SHORT


def _run(tmp_path: Path, n: int = 8) -> Path:
    _oracle_run(tmp_path / "run", [ROW | {"id": f"r{i}", "answer": _answer_of(i)}
                                   for i in range(n)])
    return tmp_path / "run"


def person_answer(i: int) -> list[str]:
    """The person agrees with the judge but on r1 and r5, whose Louvre claim (index 2) they
    find right and in no context: self_knowledge, not hallucination."""
    if not i % 2:
        return ["supported"]
    return [c if (k != 2 or i % 4 != 1) else "self_knowledge"
            for k, c in enumerate(JUDGE_ANSWER)]


def person_truth(i: int) -> list[str]:
    """On the even rows the person finds the second ground-truth claim (two million people) in
    a context and stated: used."""
    return ["used", "used", "not_retrieved", "unused"] if not i % 2 else JUDGE_TRUTH


def class_rows(ids: range, side: str, classes: Any, order: str = "random") -> list[dict]:
    return [{"id": f"r{i}", "metric": side, "claim": k, "label": 1, "class": c, "order": order}
            for i in ids for k, c in enumerate(classes(i))]


def test_class_labels_of_every_row_give_the_people_s_diagnosis_means(tmp_path: Path) -> None:
    from localeval.labels.estimate import estimate_run

    run_dir = _run(tmp_path)
    write_labels(run_dir / "labels.jsonl", class_rows(range(8), ANSWER_CLAIMS, person_answer)
                 + class_rows(range(8), TRUTH_CLAIMS, person_truth))
    est = estimate_run(run_dir)
    assert set(est.estimates) == {"noise_sensitivity", "noise_sensitivity.relevant",
                                  "noise_sensitivity.irrelevant", "hallucination",
                                  "self_knowledge", "claim_recall", "context_utilization"}
    assert est.not_estimated == {} and est.dropped == {}
    means = {k: e.mean for k, e in est.estimates.items()}
    judge = {k: e.judge_mean for k, e in est.estimates.items()}
    # every row labelled: the labels' mean. hallucination: r3, r7 1/5 each, the rest 0
    assert means == pytest.approx({
        "hallucination": 0.4 / 8, "self_knowledge": (0.4 * 2 + 0.2 * 2) / 8,
        "noise_sensitivity": 0.4 * 4 / 8, "noise_sensitivity.relevant": 0.2 * 4 / 8,
        "noise_sensitivity.irrelevant": 0.2 * 4 / 8,
        "claim_recall": (0.75 * 4 + 0.5 * 4) / 8,  # 0.625
        "context_utilization": (2 / 3 * 4 + 0.5 * 4) / 8,
    })
    assert judge["hallucination"] == pytest.approx(0.1)  # r1, r3, r5, r7: 1/5
    assert judge["claim_recall"] == pytest.approx(0.5)
    assert all(e.n_labels == 8 for e in est.estimates.values())
    assert set(est.units.values()) == {"rows"}


def test_class_labels_of_a_random_few_are_the_ppi_labels(tmp_path: Path) -> None:
    from localeval.labels.estimate import estimate_run
    from localeval.labels.ppi import ppi_mean

    run_dir = _run(tmp_path)
    write_labels(run_dir / "labels.jsonl", class_rows(range(4), ANSWER_CLAIMS, person_answer))
    est = estimate_run(run_dir)
    got = est.estimates["hallucination"]
    judge_all = [0.2 if i % 2 else 0.0 for i in range(8)]
    expected = ppi_mean(judge_all, judge_all[:4], [0.0, 0.0, 0.0, 0.2])
    assert (got.mean, got.ci, got.n_labels) == (expected.mean, expected.ci, 4)
    assert "claim_recall" not in est.estimates  # no truth claim labelled


def test_an_unsure_claim_leaves_its_sample_out_and_is_counted(tmp_path: Path) -> None:
    from localeval.labels.estimate import estimate_run

    run_dir = _run(tmp_path)
    rows = class_rows(range(4), ANSWER_CLAIMS, person_answer)
    rows[-1] = rows[-1] | {"label": None, "class": None}  # r3's last claim: unsure
    rows = [{k: v for k, v in r.items() if v is not None or k == "label"} for r in rows]
    write_labels(run_dir / "labels.jsonl", rows)
    est = estimate_run(run_dir)
    assert est.estimates["hallucination"].n_labels == 3
    assert est.unsure["hallucination"] == 1
    assert any("1 of the 4 samples drawn at random were marked unsure" in n for n in est.notes)


def test_a_sample_label_of_the_score_wins_over_its_claims_classes(tmp_path: Path) -> None:
    from localeval.labels.estimate import estimate_run

    run_dir = _run(tmp_path)
    rows = class_rows(range(8), ANSWER_CLAIMS, person_answer)
    write_labels(run_dir / "labels.jsonl", [
        *rows, {"id": "r3", "metric": "hallucination", "label": 1.0, "order": "random"}])
    est = estimate_run(run_dir)
    assert est.estimates["hallucination"].mean == pytest.approx((0.2 + 1.0) / 8)
    assert est.estimates["self_knowledge"].mean == pytest.approx(1.2 / 8)  # unchanged


def test_class_labels_that_do_not_cover_every_claim_or_judged_another_claim_are_left_out(
        tmp_path: Path) -> None:
    from localeval.labels.estimate import estimate_run

    run_dir = _run(tmp_path)
    rows = class_rows(range(6), ANSWER_CLAIMS, person_answer)
    rows = [r for r in rows if not (r["id"] == "r1" and r["claim"] == 4)]  # r1: 4 of 5
    write_labels(run_dir / "labels.jsonl", rows)
    lines = (run_dir / "labels.jsonl").read_text(encoding="utf-8").splitlines()
    moved = json.loads(lines[0]) | {"statement": "Paris is the capital of Spain."}  # r0's claim
    (run_dir / "labels.jsonl").write_text("\n".join([json.dumps(moved), *lines[1:]]) + "\n",
                                          encoding="utf-8")
    est = estimate_run(run_dir)
    assert est.dropped == {"claim": 1}
    assert est.estimates["hallucination"].n_labels == 4  # r2 … r5; r0's one label is left out
    assert any("diagnosis.answer_claims: 1 sample(s) have class labels that do not cover "
               "every claim" in n for n in est.notes)  # r1
    assert any("judged a claim the sample no longer has" in n for n in est.notes)


def test_informative_class_labels_do_not_enter_the_estimate(tmp_path: Path) -> None:
    from localeval.labels.estimate import estimate_run

    run_dir = _run(tmp_path)
    write_labels(run_dir / "labels.jsonl",
                 class_rows(range(3), ANSWER_CLAIMS, person_answer)
                 + class_rows(range(3, 6), ANSWER_CLAIMS, person_answer, "informative"))
    est = estimate_run(run_dir)
    assert est.estimates["hallucination"].n_labels == 3
    assert any("hallucination: 3 sample(s) labelled in the informative order" in n
               for n in est.notes)


def test_compare_corrects_the_difference_with_class_labels_of_both_runs(tmp_path: Path) -> None:
    from localeval.labels.compare import corrected_differences

    a = _run(tmp_path / "a")
    b = _run(tmp_path / "b")
    write_labels(a / "labels.jsonl", class_rows(range(8), ANSWER_CLAIMS, person_answer))
    write_labels(b / "labels.jsonl", class_rows(range(8), ANSWER_CLAIMS,
                                                lambda i: person_answer(i + 2)
                                                if i % 2 else ["supported"]))
    rows, _ = corrected_differences(a, b)
    by_key = {r["key"]: r for r in rows}
    # B's person: r1 and r5 read as r3 and r7 did (hallucination 0.2), r3 and r7 as r1 and r5
    assert by_key["hallucination"]["diff"] == pytest.approx(0.0)
    assert by_key["hallucination"]["n_labels"] == 8
    assert set(by_key) >= {"noise_sensitivity", "self_knowledge"}


def test_a_label_of_a_claim_class_made_in_python_is_bound_as_written(tmp_path: Path) -> None:
    from localeval.labels.bound import binding, checker, run_content

    run_dir = _run(tmp_path, n=2)
    content = run_content(run_dir)
    bound = binding(content["r1"], ANSWER_CLAIMS, 2)
    assert bound["statement"] == "The Louvre museum first opened in the year 1793."
    assert binding(content["r1"], TRUTH_CLAIMS, 3)["statement"] == (
        "Paris hosted the Summer Olympic Games in 1900.")
    label = Label(id="r1", metric=ANSWER_CLAIMS, claim=2, label=1, **{"class": "hallucination"},
                  **bound)
    check = checker(content)
    assert check(label) is None
    assert check(label.model_copy(update={"claim": 3})) == "claim"


def test_report_shows_the_diagnosis_means_the_classes_corrected(tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]
                                                               ) -> None:
    from localeval.cli import main

    run_dir = _run(tmp_path)
    write_labels(run_dir / "labels.jsonl", class_rows(range(8), ANSWER_CLAIMS, person_answer))
    assert main(["report", str(run_dir)]) == 0
    capsys.readouterr()
    summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    ppi = summary["labels"]["ppi"]
    assert ppi["hallucination"]["mean"] == pytest.approx(0.05)
    assert ppi["hallucination"]["unit"] == "rows" and ppi["hallucination"]["n_labels"] == 8
    md = (run_dir / "report.md").read_text(encoding="utf-8")
    assert "hallucination: corrected from 8 human labels" in md
