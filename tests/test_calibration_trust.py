"""Issue 53, items 9, 12, 15 and 16: a run that scored nothing exits 3 (and `--estimate` names
the missing field); a calibration file is checked (τ in the fitted range, every template of the
run covered) and recorded in summary.json and the report; `calibrate` refuses a τ that agrees
worse with its own labels out of fold than the τ it replaces, and reports both when it writes;
`.soft` does not move with τ; the Python API, assert_scores and the labelling page say when the
judge is uncalibrated."""

from __future__ import annotations

import hashlib
import json
import warnings
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.judge.fake import FakeJudge
from localeval.labels import calibrate as cal_mod
from localeval.metrics.claims.verdicts import FITTED_FOR
from localeval.models.embed import HashEmbedder
from localeval.results.runfiles import read_json, write_json
from tests.conftest import EXAMPLE, run_fake
from tests.test_labels_calibrate import judged_run
from tests.test_labels_estimate import write_labels
from tests.test_report import ANSWERS

CONTEXT = "Insulin was discovered in 1921 by Frederick Banting and Charles Best in Toronto."
ROW = {"id": "a", "question": "Who discovered insulin?", "contexts": [CONTEXT],
       "answer": "Banting and Best discovered insulin. The work was done in Toronto. "
                 "Marie Curie discovered insulin in 1935."}


def rows_file(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


# ---- item 9 / 16: a run that scored nothing -----------------------------------------------

def test_a_run_whose_rows_all_lack_a_field_exits_3_and_keeps_its_results(
        tmp_path: Path, fake_cli, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    data = rows_file(tmp_path / "rows.jsonl", [
        {"id": f"q{i}", "question": "Who?", "answer": "Banting."} for i in range(3)])
    out = tmp_path / "out"
    assert fake_cli(data, [], out) == 3  # faithfulness needs contexts: skipped on every row
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert last.startswith("error: nothing scored: no metric has a score on any of the 3 ")
    assert "faithfulness: 3 skipped" in last and "contexts" in last and str(out) in last
    summary = read_json(out / "summary.json")  # nothing computed is lost
    assert summary["metrics"]["faithfulness"]["skipped"] == 3
    assert (out / "results.jsonl").read_text().count("\n") == 3 and (out / "report.md").is_file()


def test_a_run_in_which_every_sample_errored_exits_3(
        tmp_path: Path, fake_cli, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    out = tmp_path / "out"
    assert fake_cli(EXAMPLE, [], out) == 3  # no queued answer: every judge request fails
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "nothing scored" in last and "errors" in last and "no queued answer" in last
    assert read_json(out / "summary.json")["metrics"]["faithfulness"]["errors"] > 0


def test_a_run_where_some_rows_scored_exits_0(tmp_path: Path, fake_cli) -> None:  # type: ignore[no-untyped-def]
    assert fake_cli(EXAMPLE, ANSWERS, tmp_path / "out") == 0


def test_the_estimate_names_the_missing_field(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    data = rows_file(tmp_path / "rows.jsonl", [
        {"id": "q1", "question": "Who?", "answer": "Banting."},
        {"id": "q2", "question": "Who?", "answer": "Banting.", "contexts": [CONTEXT]}])
    argv = ["run", str(data), "--judge", "fake", "--fake-answers", str(tmp_path / "none.json"),
            "--metrics", "faithfulness,context_recall", "--no-cache", "--estimate",
            "--no-calibrate"]
    (tmp_path / "none.json").write_text("[]", encoding="utf-8")
    assert main([*argv, "--json"]) == 0
    estimate = json.loads(capsys.readouterr().out)
    assert estimate["skipped"]["faithfulness"] == {"rows": 1, "missing": {"contexts": 1}}
    assert estimate["skipped"]["context_recall"]["missing"] == {"contexts": 1, "ground_truth": 2}
    notes = "\n".join(estimate["notes"])
    assert "context_recall would score nothing: every row lacks a field it needs: contexts " \
           "(missing or empty in 1 of 2 rows), ground_truth (missing or empty in 2 of 2 " \
           "rows)" in notes
    assert "faithfulness would be skipped on 1 of 2 rows: it needs contexts" in notes
    assert main(argv) == 0
    assert "note: context_recall would score nothing" in capsys.readouterr().out


# ---- item 12: a calibration file is checked and recorded ----------------------------------

def calibration_file(tmp_path: Path) -> Path:
    """A calibration of the fake judge fitted on judged_run's labels, covering faithfulness."""
    run_dir = judged_run(tmp_path / "labelled")
    write_labels(run_dir / "labels.jsonl", [
        {"id": f"s{i}", "metric": "faithfulness", "claim": 0, "label": int(i >= 12)}
        for i in range(20)])
    calib = tmp_path / "calib.json"
    assert main(["calibrate", str(run_dir), "--out", str(calib)]) == 0
    return calib


@pytest.mark.parametrize("change, words", [
    ({"tau": 0.0, "prompts": {}}, "tau 0.0 is outside the range calibrate fits (0.05 … 0.95)"),
    ({"tau": 0.99}, "outside the range"),
    ({"prompts": {}}, "names no template"),
    ({"n_claims": 0, "n_answers": 0, "n_supported": 0, "n_right": 0}, "fitted on no label"),
    ({"n_supported": 99}, "counts disagree"),
])
def test_a_hand_edited_calibration_is_refused_in_one_line(
        tmp_path: Path, fake_cli, capsys: pytest.CaptureFixture[str],  # type: ignore[no-untyped-def]
        change: dict, words: str) -> None:
    calib = calibration_file(tmp_path)
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({**json.loads(calib.read_text()), **change}), encoding="utf-8")
    capsys.readouterr()
    assert fake_cli(EXAMPLE, ANSWERS, tmp_path / "o", "--calibration", str(bad)) == 2
    err = capsys.readouterr().err
    assert words in err and str(bad) in err and err.count("\n") == 1
    assert not (tmp_path / "o").exists()


def test_a_calibration_must_cover_every_template_of_the_run(
        tmp_path: Path, fake_cli, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    calib = calibration_file(tmp_path)
    capsys.readouterr()
    assert fake_cli(EXAMPLE, ANSWERS, tmp_path / "o", "--calibration", str(calib),
                    metrics="faithfulness,context_recall") == 2
    err = capsys.readouterr().err
    assert "does not cover the templates" in err and "context_recall" in err
    assert err.count("\n") == 1


def test_the_calibration_is_recorded_in_the_summary_and_the_report(
        tmp_path: Path, fake_cli) -> None:  # type: ignore[no-untyped-def]
    calib = calibration_file(tmp_path)
    out = tmp_path / "out"
    assert fake_cli(EXAMPLE, ANSWERS, out, "--calibration", str(calib)) == 0
    cal = json.loads(calib.read_text())
    record = read_json(out / "summary.json")["calibration"]
    assert record["tau"] == cal["tau"] and record["calibrated"] is True
    assert record["file"]["sha256"] == hashlib.sha256(calib.read_bytes()).hexdigest()
    assert record["file"]["n_claims"] == 20 and record["file"]["path"] == str(calib)
    for page in ("report.md", "report.html"):
        text = (out / page).read_text(encoding="utf-8")
        assert f"τ {cal['tau']} from {calib}" in text and record["file"]["sha256"][:12] in text


# ---- item 15: never worse on its own labels than what it replaces -------------------------

def noisy_run(tmp_path: Path, applied: dict | None,
              flips: frozenset[int] = frozenset({0, 1, 9, 12, 15})) -> Path:
    """judged_run whose labels carry no signal the shipped τ misses: the right answers are
    those with P ≥ 0.6 but for a few flips, which a τ fitted on the rest chases."""
    run_dir = judged_run(tmp_path / "noisy")
    if applied is not None:
        summary = read_json(run_dir / "summary.json")
        write_json(run_dir / "summary.json", {**summary, "support_threshold": applied})
    write_labels(run_dir / "labels.jsonl", [
        {"id": f"s{i}", "metric": "faithfulness", "claim": 0,
         "label": int((i >= 12) != (i in flips))} for i in range(20)])
    return run_dir


def test_out_of_fold_keeps_a_sample_in_one_fold_and_fits_on_the_rest(tmp_path: Path) -> None:
    run_dir = noisy_run(tmp_path, None)
    units, _ = cal_mod.labelled_units(run_dir)
    assert len(units) == 20
    found = cal_mod.out_of_fold(units, 0.525, {"en": 0.6})
    assert found.folds == cal_mod.FOLDS and 0.0 <= found.agreement <= 1.0
    assert found.labels == 0.45 and 0.0 <= found.mean <= 1.0  # 9 of 20 supported


def test_a_worse_fit_is_refused_and_the_old_one_kept(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = noisy_run(tmp_path, {"en": 0.6, "zh": 0.45})
    cal, _ = cal_mod.fit_calibration(run_dir)
    oof = cal.out_of_fold
    assert oof["fitted"] < oof["replaced"], oof  # the premise: fitted chases the flips
    assert oof["mean"]["gap_fitted"] <= oof["mean"]["gap_replaced"], oof  # on agreement only
    calib = tmp_path / "calib.json"
    assert main(["calibrate", str(run_dir), "--out", str(calib)]) == 1
    err = [e for e in capsys.readouterr().err.strip().splitlines() if not e.startswith("note:")]
    assert len(err) == 1 and "is worse than the τ the labelled run applied (en 0.6, zh 0.45) " \
        "out of fold (5 folds): it agrees worse with its own labels: " \
        f"{oof['fitted']:.3f} against {oof['replaced']:.3f}" in err[0] and "--force" in err[0]
    assert not calib.exists()
    calib.write_text("keep", encoding="utf-8")  # whatever was there stays
    assert main(["calibrate", str(run_dir), "--out", str(calib)]) == 1
    assert calib.read_text() == "keep"
    assert main(["calibrate", str(run_dir), "--out", str(calib), "--force"]) == 0
    assert json.loads(calib.read_text())["tau"] == cal.tau
    assert "warning: written with --force" in capsys.readouterr().err


def test_a_better_fit_is_written_with_the_agreement_before_and_after(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = judged_run(tmp_path / "run")
    summary = read_json(run_dir / "summary.json")  # the run applied a τ far off its labels
    write_json(run_dir / "summary.json", {**summary, "support_threshold": {"en": 0.2}})
    write_labels(run_dir / "labels.jsonl", [
        {"id": f"s{i}", "metric": "faithfulness", "claim": 0, "label": int(i >= 12)}
        for i in range(20)])
    calib = tmp_path / "calib.json"
    assert main(["calibrate", str(run_dir), "--out", str(calib)]) == 0
    out = capsys.readouterr().out
    written = json.loads(calib.read_text())
    oof = written["out_of_fold"]
    assert oof["fitted"] > oof["replaced"] and oof["folds"] == cal_mod.FOLDS
    assert written["replaces"] == {"tau": {"en": 0.2}, "source": "the τ the labelled run applied"}
    assert (f"out of fold ({cal_mod.FOLDS} folds): agreement {oof['replaced']:.3f} before (the τ "
            f"the labelled run applied: en 0.2), {oof['fitted']:.3f} after") in out
    mean = written["answers_mean"]  # the labelled answers' mean moves toward their labels
    assert abs(mean["fitted"] - mean["labels"]) < abs(mean["replaced"] - mean["labels"])
    assert f"mean label {mean['labels']:.3f}" in out
    # a second calibrate replaces this file: it is compared with the file's τ now
    again, _ = cal_mod.fit_calibration(run_dir, replacing=calib)
    assert again.replaces == {"tau": written["tau"], "source": f"the calibration in {calib}"}


# ---- item 15: `.soft` does not depend on τ -------------------------------------------------

def probed(*ps: float) -> dict:
    return {"verdicts": [{"verdict": 1} for _ in ps],
            "_probs": [["verdict", {"1": p, "0": 1 - p}] for p in ps]}


def test_soft_does_not_move_when_only_tau_changes() -> None:
    """P 0.9, 0.6 and 0.65; the third sentence names Curie and 1935, which the context lacks.
    τ 0.5 and 0.7 change the score; .soft stays the mean P with 0 for the checked claim."""
    found = {}
    for tau in (0.5, 0.7):
        outcome, _ = run_fake([ROW], {"faithfulness_verdicts": [probed(0.9, 0.6, 0.65)]},
                              metrics=["faithfulness"], support_threshold=tau)
        [rec] = outcome.records
        found[tau] = rec.scores
        third = rec.details["faithfulness"]["statements"][2]
        assert third["novel_details"] and third["rule"] == "check" and third["p_supported"] == 0
    assert found[0.5]["faithfulness"] == pytest.approx(2 / 3)
    assert found[0.7]["faithfulness"] == pytest.approx(1 / 3)
    assert found[0.5]["faithfulness.weighted"] == found[0.7]["faithfulness.weighted"] == \
        pytest.approx((0.9 + 0.6 + 0.0) / 3)


# ---- item 16: the API, assert_scores and the labelling page say "uncalibrated" -------------

class OwnJudge(FakeJudge):
    """The fake judge under a user's own model's name: τ was not fitted for it."""

    name = "mine.gguf"
    fingerprint = "a" * 64


def own_judge() -> OwnJudge:
    return OwnJudge({"faithfulness_verdicts": [probed(0.9, 0.6, 0.65)]})


@pytest.fixture(autouse=True)
def _a_new_process() -> None:
    """Each test as a new process: the uncalibrated-judge warning not said yet."""
    from localeval import api

    api.UNCALIBRATED_SAID.clear()


def test_the_uncalibrated_warning_is_said_once_per_judge() -> None:
    """Once per judge in a process (a test suite's many evaluate / assert_scores calls, one per
    case): the note stays on every result, the warning is not repeated."""
    import localeval
    from localeval.api import UncalibratedJudgeWarning

    class OtherJudge(OwnJudge):
        name = "other.gguf"
        fingerprint = "b" * 64

    other = OtherJudge({"faithfulness_verdicts": [probed(0.9, 0.6, 0.65)]})
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        results = [localeval.evaluate([ROW | {"id": f"r{i}"}], metrics="faithfulness",
                                      judge=judge, embedder=HashEmbedder(), no_cache=True)
                   for i, judge in enumerate([own_judge(), own_judge(), own_judge(),
                                              other])]
    uncalibrated = [w for w in said if issubclass(w.category, UncalibratedJudgeWarning)]
    assert [str(w.message).split("to calibrate ")[1].split(" ")[0] for w in uncalibrated] == \
        ["mine.gguf", "other.gguf"]
    assert all(r.calibration_note for r in results)


def test_the_api_says_the_judge_is_uncalibrated(tmp_path: Path) -> None:
    import localeval
    from localeval.api import UncalibratedJudgeWarning

    with pytest.warns(UncalibratedJudgeWarning, match=f"τ was fitted for {FITTED_FOR[0]}"):
        res = localeval.evaluate([ROW], metrics="faithfulness", judge=own_judge(),
                                 embedder=HashEmbedder(), no_cache=True)
    assert res.calibration_note is not None and "to calibrate mine.gguf" in res.calibration_note
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the fake judge itself: no τ note, no warning
        plain = localeval.evaluate([ROW], metrics="faithfulness", judge=FakeJudge(
            {"faithfulness_verdicts": [probed(0.9, 0.6, 0.65)]}), embedder=HashEmbedder(),
            no_cache=True)
    assert plain.calibration_note is None


def test_assert_scores_says_the_judge_is_uncalibrated(tmp_path: Path) -> None:
    from localeval.api import UncalibratedJudgeWarning
    from localeval.testing import assert_scores

    with pytest.raises(AssertionError) as info, pytest.warns(UncalibratedJudgeWarning):
        assert_scores([ROW], faithfulness=0.9, judge=own_judge(), embedder=HashEmbedder(),
                      no_cache=True)
    assert f"note: τ was fitted for {FITTED_FOR[0]}" in str(info.value)
    assert "to calibrate mine.gguf" in str(info.value)


def test_the_labelling_page_says_the_judge_is_uncalibrated(tmp_path: Path) -> None:
    from localeval.labelpage.session import RunSession

    out = tmp_path / "out"
    with pytest.warns(Warning):
        import localeval

        localeval.evaluate([ROW], metrics="faithfulness", judge=own_judge(),
                           embedder=HashEmbedder(), no_cache=True, out=out)
    state = RunSession(out).state("faithfulness")
    assert any(n.startswith(f"τ was fitted for {FITTED_FOR[0]}") and "mine.gguf" in n
               for n in state["notes"])


@pytest.mark.model
def test_soft_does_not_move_with_tau_on_the_real_judge(tmp_path: Path) -> None:
    """The 0.5B on ROW at τ 0.05 and 0.95: the hard score moves with τ, `.soft` does not (the
    claim naming Curie and 1935 is 0 at both)."""
    from tests.conftest import model_path

    if not model_path("tiny").exists():
        pytest.skip("the tiny judge is not pulled")
    data = rows_file(tmp_path / "row.jsonl", [ROW])
    found = {}
    for tau in ("0.05", "0.95"):
        out = tmp_path / tau
        assert main(["run", str(data), "--out", str(out), "--profile", "tiny", "--metrics",
                     "faithfulness", "--support-threshold", tau, "--quiet"]) == 0
        [rec] = [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines()]
        found[tau] = rec["scores"]
        checked = [s for s in rec["details"]["faithfulness"]["statements"]
                   if s.get("novel_details")]
        assert checked and all(s["p_supported"] == 0 and s["rule"] == "check" for s in checked)
    assert found["0.05"]["faithfulness"] > found["0.95"]["faithfulness"]
    assert found["0.05"]["faithfulness.weighted"] == found["0.95"]["faithfulness.weighted"]


# ---- item 15: a calibration never moves the mean away from its own labels -------------------

# 40 one-claim answers, half right: the judge's P of the right ones and of the wrong ones. The τ
# that best separates them (0.35: 0.75 agreement) calls 26 of 40 supported, a mean of 0.65 far
# from the labels' 0.50; τ 0.45 ranks nearly as well (0.70) and calls 20.
RIGHT = [0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.7, 0.8, 0.9, 0.95]
WRONG = [0.05, 0.1, 0.15, 0.2, 0.25, 0.32, 0.42, 0.52, 0.62, 0.72]


def mean_run(tmp_path: Path, applied: dict) -> Path:
    """A labelled run of the answers above, judged at the τ `applied`."""
    from localeval.results.records import SampleRecord

    ps = [(p, 1) for p in RIGHT] + [(p, 0) for p in WRONG]
    ps += [(round(p + 0.01, 2), y) for p, y in ps]
    run_dir = judged_run(tmp_path / "mean")
    records = [SampleRecord(id=f"m{i}", line=i + 1, language="en",
                            scores={"faithfulness": float(p >= applied["en"])},
                            details={"faithfulness": {"statements": [
                                {"statement": f"c{i}", "verdict": int(p >= applied["en"]),
                                 "rule": "judge", "p_supported": p}]}})
               for i, (p, _) in enumerate(ps)]
    (run_dir / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records),
                                           encoding="utf-8")
    summary = read_json(run_dir / "summary.json")
    write_json(run_dir / "summary.json", {**summary, "support_threshold": applied})
    write_labels(run_dir / "labels.jsonl", [
        {"id": f"m{i}", "metric": "faithfulness", "label": y} for i, (_, y) in enumerate(ps)])
    return run_dir


def test_the_fit_does_not_chase_agreement_away_from_the_labels_mean(tmp_path: Path) -> None:
    run_dir = mean_run(tmp_path, {"en": 0.6})
    cal, _ = cal_mod.fit_calibration(run_dir)
    mean = cal.answers_mean
    assert mean["labels"] == 0.5
    assert cal.tau == 0.45 and mean["fitted"] == 0.5 and cal.mean_gap == 0.0  # not 0.35 / 0.65
    assert abs(mean["fitted"] - mean["labels"]) <= abs(mean["replaced"] - mean["labels"])


def test_a_fit_that_moves_the_mean_away_is_refused_and_says_so(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The run applied τ 0.45, whose mean score is the labels' mean (0.55). Out of fold the
    fitted τ agrees better but lands 0.10 off the labels' mean: kept out, both means in the
    one line (the old code wrote it: it compared agreement only)."""
    run_dir = noisy_run(tmp_path, {"en": 0.45}, frozenset({1, 4, 6, 9, 19}))
    cal, _ = cal_mod.fit_calibration(run_dir)
    oof = cal.out_of_fold
    held = oof["mean"]
    assert oof["fitted"] >= oof["replaced"], oof  # the premise: it agrees no worse
    assert held["labels"] == 0.55 and held["gap_replaced"] == 0.0
    assert held["gap_fitted"] > held["gap_replaced"], held
    calib = tmp_path / "calib.json"
    assert main(["calibrate", str(run_dir), "--out", str(calib)]) == 1
    err = [e for e in capsys.readouterr().err.strip().splitlines() if not e.startswith("note:")]
    assert len(err) == 1 and "moves the labelled answers' mean score away from its labels' " \
        f"mean 0.550: {held['fitted']:.3f} (off by {held['gap_fitted']:.3f}) against 0.550 " \
        "(off by 0.000)" in err[0] and "agrees worse" not in err[0], err
    assert not calib.exists()


def test_a_written_fit_reports_the_mean_before_and_after_out_of_fold(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = mean_run(tmp_path, {"en": 0.6})  # 12 of 40 supported: 0.20 off
    calib = tmp_path / "calib.json"
    assert main(["calibrate", str(run_dir), "--out", str(calib)]) == 0
    out = capsys.readouterr().out
    held = json.loads(calib.read_text())["out_of_fold"]["mean"]
    assert held["gap_fitted"] <= held["gap_replaced"] == 0.2
    assert (f"out of fold: the labelled answers' mean score {held['replaced']:.3f} before (off "
            f"by 0.200), {held['fitted']:.3f} after (off by {held['gap_fitted']:.3f}), against "
            "the labels' 0.500") in out


def test_the_mean_gap_of_answers_and_without_answers_of_claims() -> None:
    one = [{"p_supported": 0.7, "rule": "judge"}]
    two = [{"p_supported": 0.7, "rule": "judge"}, {"p_supported": 0.3, "rule": "judge"}]
    # a right one-claim answer scores 1 at τ 0.5; a two-claim answer labelled by its claims
    # (1 and 0: its label is their mean, 0.5) scores 0.5: no gap; at τ 0.8 both score 0
    samples = [(one, 1.0, "en"), (two, 0.5, "en")]
    assert cal_mod.mean_gap([], samples, 0.5) == 0.0
    assert cal_mod.mean_gap([], samples, 0.8) == pytest.approx(0.75)
    points = [(0.7, 1, "en"), (0.3, 0, "en"), (0.6, 0, "en")]  # claims only: shares
    assert cal_mod.mean_gap(points, [], 0.5) == pytest.approx(abs(2 / 3 - 1 / 3))
    assert cal_mod.mean_gap([], [], 0.5) is None
