"""τ fitted from claim labels for a judge with no head: the calibration file, `run
--calibration` refusing another judge or other templates, and the note of an uncalibrated
judge (summary.json, the report, the run's last line)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.config import Settings
from localeval.errors import ConfigError, LabelsError
from localeval.labels.calibrate import (
    agreement,
    answer_agreement,
    balanced_accuracy,
    calibrated,
    choose_tau,
    claim_points,
    current_prompts,
    fit_calibration,
)
from localeval.metrics.claims.verdicts import FITTED_FOR, calibration_status
from localeval.results.records import SampleRecord
from localeval.results.runfiles import read_json, write_json
from tests.conftest import EXAMPLE, model_path
from tests.test_labels_estimate import write_labels

TEMPLATE = "en/faithfulness_verdicts.j2"


def judged_run(path: Path, judge_sha: str = "fake") -> Path:
    """20 samples of one claim each, judged with P(supported) = 0.05·i; samples 12–19 are
    supported (a judge that needs τ ≈ 0.6), plus one sample whose claim a check settled."""
    path.mkdir(parents=True)
    records = []
    for i in range(20):
        records.append(SampleRecord(id=f"s{i}", line=i + 1, language="en",
                                    scores={"faithfulness": float(0.05 * i >= 0.5)},
                                    details={"faithfulness": {"statements": [
                                        {"statement": f"c{i}", "verdict": int(0.05 * i >= 0.5),
                                         "rule": "judge", "p_supported": 0.05 * i}]}}))
    records.append(SampleRecord(id="ruled", line=21, language="en", scores={"faithfulness": 0.0},
                                details={"faithfulness": {"statements": [
                                    {"statement": "x", "verdict": 0, "rule": "check",
                                     "p_supported": 0.99}]}}))
    (path / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records),
                                        encoding="utf-8")
    from localeval.metrics import resolve
    from localeval.prompts import metric_prompt_hashes

    write_json(path / "summary.json", {  # the templates of a faithfulness run, and one gone
        "models": {"judge": {"name": "my-judge.gguf", "sha256": judge_sha}},
        "prompts": {**metric_prompt_hashes(resolve(["faithfulness"], [])),
                    TEMPLATE: current_prompts([TEMPLATE])[TEMPLATE], "en/gone.j2": "0" * 64}})
    return path


def truth(i: int) -> int:
    return int(i >= 12)


def test_tau_is_the_cut_that_best_separates_the_labelled_claims(tmp_path: Path) -> None:
    run_dir = judged_run(tmp_path / "run")
    write_labels(run_dir / "labels.jsonl", [
        {"id": f"s{i}", "metric": "faithfulness", "claim": 0, "label": truth(i),
         "order": "informative" if i % 2 else "random"} for i in range(20)]
        + [{"id": "ruled", "metric": "faithfulness", "claim": 0, "label": 1}])
    points, samples, _ = claim_points(run_dir)
    assert len(points) == 20  # any order; the claim a check settled is not τ's
    assert len(samples) == 21  # every labelled answer, the ruled one too (its score counts)
    cal, notes = fit_calibration(run_dir)
    assert balanced_accuracy(points, 0.58) == 1.0  # P 0.55 no, 0.60 yes: the best cut, but
    # it scores the answer a check settled 0 against its label 1, a mean 1/21 under the labels';
    # τ 0.55 calls one more claim supported (P 0.55) and meets the labels' mean
    assert cal.tau == 0.55 and cal.mean_gap == 0.0
    assert cal.balanced_accuracy == pytest.approx((1.0 + 11 / 12) / 2, abs=1e-4)
    assert cal.agreement == pytest.approx((cal.balanced_accuracy + cal.answer_auroc) / 2,
                                          abs=1e-4)
    assert cal.n_claims == 20 and cal.n_supported == 8 and cal.n_answers == 21
    assert cal.judge.sha256 == "fake" and cal.judge.name == "my-judge.gguf"
    assert cal.default_agreement == pytest.approx(
        agreement(points, samples, {"en": 0.6, "zh": 0.45}), abs=1e-4)
    assert balanced_accuracy(points, 0.3) < 1.0
    assert any("rough below 50" in n for n in notes)


def test_sample_labels_mark_claims_where_they_can(tmp_path: Path) -> None:
    run_dir = judged_run(tmp_path / "run")
    write_labels(run_dir / "labels.jsonl", [
        {"id": f"s{i}", "metric": "faithfulness", "label": truth(i)} for i in range(20)])
    points, samples, _ = claim_points(run_dir)
    assert sorted(y for _, y, _ in points) == sorted(truth(i) for i in range(20))
    assert sorted(y for _, y, _ in samples) == sorted(truth(i) for i in range(20))


def test_tau_needs_both_kinds_of_claim() -> None:
    with pytest.raises(LabelsError, match="supported and unsupported"):
        choose_tau([(0.9, 1, "en"), (0.8, 1, "en")])
    tau, accuracy = choose_tau([(0.9, 1, "en"), (0.3, 0, "en"), (0.7, 1, "en")])
    assert 0.3 < tau <= 0.7 and accuracy == 1.0
    # answers only: two claims each; the right one's P are 0.8 and 0.5, the wrong one's 0.6, 0.2
    claims = [{"rule": "judge", "p_supported": p} for p in (0.8, 0.5)]
    wrong = [{"rule": "judge", "p_supported": p} for p in (0.6, 0.2)]
    tau, reached = choose_tau([], 0.5, [(claims, 1, "en"), (wrong, 0, "en")])
    assert reached == 1.0 and (0.2 < tau <= 0.5 or 0.6 < tau <= 0.8)
    assert answer_agreement([(claims, 1, "en"), (wrong, 0, "en")], 0.55) == 0.5  # 1/2 vs 1/2


def test_calibrate_cli_and_run_with_the_file(tmp_path: Path, fake_cli,  # type: ignore[no-untyped-def]
                                             capsys: pytest.CaptureFixture[str]) -> None:
    run_dir = judged_run(tmp_path / "run")
    write_labels(run_dir / "labels.jsonl", [
        {"id": f"s{i}", "metric": "faithfulness", "claim": 0, "label": truth(i)}
        for i in range(20)])
    calib = tmp_path / "calib.json"
    assert main(["calibrate", str(run_dir), "--out", str(calib)]) == 0
    assert "agreement 1.000" in capsys.readouterr().out
    tau = json.loads(calib.read_text())["tau"]
    from tests.test_report import ANSWERS

    out = tmp_path / "out"
    assert fake_cli(EXAMPLE, ANSWERS, out, "--calibration", str(calib)) == 0
    assert read_json(out / "summary.json")["settings"]["support_threshold"] == tau
    capsys.readouterr()
    for change, words in (({"judge": {"name": "other", "sha256": "b" * 64}}, "another judge"),
                          ({"prompts": {TEMPLATE: "c" * 64}}, "other templates"),
                          ({"tau": 2}, "tau")):
        bad = tmp_path / "bad.json"
        bad.write_text(json.dumps({**json.loads(calib.read_text()), **change}))
        assert fake_cli(EXAMPLE, ANSWERS, tmp_path / "o2", "--calibration", str(bad)) == 2
        err = capsys.readouterr().err
        assert words in err and err.count("\n") == 1
    assert fake_cli(EXAMPLE, ANSWERS, tmp_path / "o3", "--calibration", str(calib),
                    "--support-threshold", "0.5") == 2
    assert "give one of them" in capsys.readouterr().err


def test_a_missing_or_broken_calibration_file_is_one_line(tmp_path: Path) -> None:
    settings = Settings(judge="fake")
    with pytest.raises(ConfigError, match="No such file"):
        calibrated(settings, tmp_path / "none.json")
    (tmp_path / "x.json").write_text("{", encoding="utf-8")
    with pytest.raises(ConfigError, match="not JSON"):
        calibrated(settings, tmp_path / "x.json")


def test_calibration_status() -> None:
    small = {"judge": {"name": FITTED_FOR[0], "sha256": FITTED_FOR[1]}}
    mine = {"judge": {"name": "mine.gguf", "sha256": "a" * 64}}
    assert calibration_status(Settings(), ["faithfulness"], small)["calibrated"] is True
    status = calibration_status(Settings(), ["faithfulness"], mine)
    assert status["calibrated"] is False
    assert status["note"].startswith(f"τ was fitted for {FITTED_FOR[0]}; label 50 samples with "
                                     "`localeval label` to calibrate mine.gguf")
    assert calibration_status(Settings(support_threshold=0.4), ["faithfulness"],
                              mine)["calibrated"] is True
    assert calibration_status(Settings(), ["faithfulness"],
                              {**mine, "verifier": {"tau": {"en": 0.5}}})["calibrated"] is True
    assert calibration_status(Settings(), ["answer_relevance"], mine) is None
    assert calibration_status(Settings(), ["faithfulness"],
                              {"judge": {"name": "fake", "sha256": "fake"}}) is None


@pytest.mark.model
def test_an_uncalibrated_judge_says_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]
                                       ) -> None:
    """The 0.5B as "your own judge": summary.json, the report and the run's last line say τ was
    fitted for the 1.5B."""
    if not model_path("tiny").exists():
        pytest.skip("the tiny judge is not pulled")
    data = tmp_path / "one.jsonl"
    data.write_text(EXAMPLE.read_text(encoding="utf-8").splitlines()[2] + "\n", encoding="utf-8")
    out = tmp_path / "out"
    assert main(["run", str(data), "--out", str(out), "--profile", "tiny", "--metrics",
                 "faithfulness", "--quiet"]) == 0
    note = read_json(out / "summary.json")["calibration"]["note"]
    assert note.startswith(f"τ was fitted for {FITTED_FOR[0]}; label 50 samples")
    assert "qwen2.5-coder-0.5b" in note
    for page in ("report.md", "report.html"):
        text = (out / page).read_text(encoding="utf-8")
        assert f"τ was fitted for {FITTED_FOR[0]}" in text
        assert "to calibrate qwen2.5-coder-0.5b-instruct-q4_k_m" in text
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"note: {note}"
