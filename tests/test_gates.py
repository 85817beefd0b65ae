"""CI gates: --fail-under on run and report, exit 0 / 1 (a gate failed) / 2 (usage), a line per
failed gate, and unknown metric names caught before anything runs ("did you mean")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.cli import main
from localeval.errors import UsageError
from localeval.judge.fake import ALLOW_ENV
from localeval.metrics import REGISTRY
from localeval.results import gates
from tests.conftest import EXAMPLE, fake_run_args, true_to_sentences

# One statements answer per group of sentences, in the order the example's rows ask them
# (seed-roe: 7 sentences in 4 groups; en-eiffel: 3 in 2; then one sentence each): seed-roe and
# en-eiffel get as many supported statements as unsupported ones (0.5 each), en-photosynthesis
# 1, en-insulin 0 (the judge's support of its first statement is overruled: Marie Curie, 1935
# and Paris are not in its context): the mean is 0.5.
HALF = {"verdicts": [{"verdict": 1}, {"verdict": 0}]}
ANSWERS = {
    "faithfulness_statements": true_to_sentences([
        {"statements": [["a", "b"], ["c"]]}, {"statements": [["d"], ["e"]]},
        {"statements": [["f"], ["g"]]}, {"statements": [["h"]]},
        {"statements": [["a", "b"], ["c"]]}, {"statements": [["d"]]},
        {"statements": [["a", "b"]]},
        {"statements": [["a", "b"]]},
    ]),
    "faithfulness_verdicts": [
        {"verdicts": HALF["verdicts"] * 4}, {"verdicts": HALF["verdicts"] * 2},
        {"verdicts": [{"verdict": 1}] * 2}, HALF,
    ],
}


@pytest.fixture
def run_example(fake_cli):  # type: ignore[no-untyped-def]
    """`run_example(tmp_path, *extra)`: the example through the fake judge into tmp_path/out."""
    return lambda tmp_path, *extra: fake_cli(EXAMPLE, ANSWERS, tmp_path / "out", *extra)


def test_fail_under_above_the_mean_exits_1_with_a_line(
    run_example, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_example(tmp_path, "--fail-under", "faithfulness=1.01") == 1
    err = capsys.readouterr().err
    assert "gate failed: faithfulness mean 0.5000 < 1.01 (n=4)" in err
    assert "1 of 1 gate(s) failed" in err
    assert (tmp_path / "out" / "results.jsonl").exists()  # the results are kept all the same


def test_passing_gates_exit_0(
    run_example, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        run_example(
            tmp_path, "--fail-under", "faithfulness=0.5", "--fail-under", "faithfulness=0.1"
        )
        == 0
    )
    assert "gate failed" not in capsys.readouterr().err


def test_unknown_metric_is_a_usage_error_before_the_run(
    run_example, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_example(tmp_path, "--fail-under", "faithfullness=0.5") == 2
    err = capsys.readouterr().err.strip()
    assert "unknown metric 'faithfullness'; did you mean 'faithfulness'?" in err
    assert "known:" in err and "answer_relevance" in err and "mrr" in err
    assert "\n" not in err
    assert not (tmp_path / "out").exists()  # nothing ran


@pytest.mark.parametrize(
    "spec", ["faithfulness", "faithfulness=", "=0.5", "faithfulness=high", "faithfulness=nan"]
)
def test_malformed_gate_is_a_usage_error(
    run_example, tmp_path: Path, spec: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_example(tmp_path, "--fail-under", spec) == 2
    assert "--fail-under" in capsys.readouterr().err


def test_gate_on_a_metric_the_run_does_not_compute(
    run_example, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_example(tmp_path, "--fail-under", "answer_relevance=0.5") == 2
    assert "not among the metrics this run computes" in capsys.readouterr().err


def test_report_command_gates_an_existing_run(
    run_example, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_example(tmp_path) == 0
    out = str(tmp_path / "out")
    assert main(["report", out, "--fail-under", "faithfulness=0.9"]) == 1
    assert main(["report", out, "--fail-under", "faithfulness=0.4"]) == 0
    capsys.readouterr()
    assert main(["report", out, "--fail-under", "faithfulnes=0.4"]) == 2
    assert "did you mean 'faithfulness'" in capsys.readouterr().err


def test_check_names_accepts_sub_scores_and_retrieval_figures() -> None:
    parsed = gates.parse_gates(
        [
            "context_relevance.answer_supported_precision=0.5",
            "mrr@10=0.3",
            "ndcg=0.2",
            "faithfulness=1",
        ],
        "--fail-under",
    )
    gates.check_names(parsed, REGISTRY)
    gates.check_names(parsed[:1], REGISTRY, ["context_relevance"])
    with pytest.raises(UsageError, match="did you mean 'mrr'"):
        gates.check_names(gates.parse_gates(["mrrr@10=0.3"], "--fail-under"), REGISTRY)


def test_check_fail_under_cases() -> None:
    metrics = {
        "faithfulness": {"mean": 0.8, "count": 3, "errors": 0, "skipped": 0},
        "answer_relevance": {"mean": None, "count": 0, "errors": 2, "skipped": 1},
    }
    fail_under = gates.parse_gates({"faithfulness": 0.8, "answer_relevance": 0.1}, "--fail-under")
    failures = gates.check_fail_under(fail_under, {"metrics": metrics})
    assert len(failures) == 1 and "answer_relevance: no sample was scored (2 errors" in failures[0]
    with pytest.raises(UsageError, match="scores in this run: faithfulness, answer_relevance"):
        gates.check_fail_under(gates.parse_gates(["recall=0.5"], "--fail-under"),
                               {"metrics": metrics})
    with pytest.raises(UsageError, match="positive number"):
        gates.parse_gates(["faithfulness=-0.1"], "--max-drop")


def test_a_failed_row_fails_a_gate_unless_allowed(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """One good row and one whose judge answer never parses: the mean of the good row passes,
    but the gate fails on the unscored row until --max-unscored allows it."""
    data = tmp_path / "d.jsonl"
    rows = [{"id": "ok", "question": "Q?", "answer": "It is red.", "contexts": ["It is red."]},
            {"id": "bad", "question": "Q?", "answer": "It is big.", "contexts": ["It is big."]}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    answers = tmp_path / "a.json"
    good = {"statements": [["It is red."]]}
    answers.write_text(json.dumps({
        "faithfulness_statements": [good, {"statements": [["It is big."]]}],
        "faithfulness_verdicts": [{"verdicts": [{"verdict": 1}]}] + ["not json"] * 8,
    }), encoding="utf-8")
    args = fake_run_args(data, answers, tmp_path / "o", "--fail-under", "faithfulness=0.5")
    assert main(args) == 1
    err = capsys.readouterr().err
    assert "gate failed: faithfulness: 1 sample(s) not scored (1 errors)" in err
    assert "--max-unscored 1" in err
    args = fake_run_args(data, answers, tmp_path / "o2", "--fail-under", "faithfulness=0.5",
                         "--max-unscored", "1")
    assert main(args) == 0


def test_unreadable_rows_count_against_a_gate() -> None:
    summary = {"metrics": {"faithfulness": {"mean": 0.9, "count": 5, "errors": 0, "skipped": 0,
                                            "unscored": 0}},
               "dataset": {"input_errors": [{"line": 3, "message": "not JSON"}]}}
    fail_under = gates.parse_gates(["faithfulness=0.5"], "--fail-under")
    (failure,) = gates.check_fail_under(fail_under, summary)
    assert "1 sample(s) not scored (1 unreadable rows)" in failure
    assert gates.check_fail_under(fail_under, summary, max_unscored=1) == []


def test_the_fake_judge_is_refused_outside_tests_and_fails_every_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "c.toml"
    answers = tmp_path / "a.json"
    answers.write_text(json.dumps(ANSWERS), encoding="utf-8")
    config.write_text(f'judge = "fake"\nfake_answers = "{answers}"\nclaims = "statements"\n',
                      encoding="utf-8")
    monkeypatch.delenv(ALLOW_ENV)
    code = main(["run", str(EXAMPLE), "--out", str(tmp_path / "o"), "--config", str(config),
                 "--metrics", "faithfulness", "--no-cache", "--quiet",
                 "--fail-under", "faithfulness=0.1"])
    assert code == 2 and not (tmp_path / "o" / "results.jsonl").exists()
    assert 'judge = "fake" (canned answers) is for localeval\'s own tests' in \
        capsys.readouterr().err
    summary = {"settings": {"judge": "fake"}, "models": {"judge": {"name": "fake"}},
               "metrics": {"faithfulness": {"mean": 1.0, "count": 4}}}
    (failure,) = gates.check_fail_under(gates.parse_gates(["faithfulness=0.1"], "--fail-under"),
                                        summary)
    assert "the run's judge is the fake one" in failure


def test_advisory_gates_warn_until_a_meta_eval_checked_the_metric_with_this_judge(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from types import SimpleNamespace

    from localeval.meta_eval import checks

    monkeypatch.setenv("LOCALEVAL_CACHE_DIR", str(tmp_path))
    summary = {"models": {"judge": {"name": "qwen", "sha256": "abc"}},
               "metrics": {"faithfulness": {"mean": 0.5, "count": 4},
                           "mrr": {"mean": 0.1, "count": 4}}}
    fail_under = gates.parse_gates(["faithfulness=0.8", "mrr=0.5"], "--fail-under")
    warned: list[str] = []
    failures = gates.check_fail_under(fail_under, summary, advisory_until_checked=True,
                                      warn=warned.append)
    assert len(failures) == 1 and failures[0].startswith("gate failed: mrr")  # no judge: counts
    assert len(warned) == 1 and "advisory" in warned[0] and "faithfulness" in warned[0]
    result = SimpleNamespace(
        models={"judge": {"name": "qwen", "sha256": "abc"}}, status=SimpleNamespace(complete=True),
        groups={"all": SimpleNamespace(pairwise_accuracy=0.8, pairs=4)}, metrics=["faithfulness"],
        score="faithfulness", kind="pairs", data="dev.jsonl")
    assert checks.record(result, tmp_path) == []  # four pairs check nothing (issue 41, Low)
    assert len(gates.check_fail_under(fail_under, summary, advisory_until_checked=True)) == 1
    result.groups["all"].pairs = checks.MIN_CHECKED
    assert checks.record(result, tmp_path) == ["faithfulness"]
    assert len(gates.check_fail_under(fail_under, summary, advisory_until_checked=True)) == 2
    other_judge = summary | {"models": {"judge": {"name": "q", "sha256": "zzz"}}}
    assert len(gates.check_fail_under(fail_under, other_judge, advisory_until_checked=True)) == 1


def test_a_gate_on_a_lower_is_better_score_fails_when_it_gets_worse() -> None:
    metrics = {"refusal": {"mean": 0.3, "count": 10, "errors": 0, "skipped": 0},
               "faithfulness": {"mean": 0.3, "count": 10, "errors": 0, "skipped": 0}}
    (failure,) = gates.check_fail_under(gates.parse_gates(["refusal=0.2"], "--fail-under"),
                                        {"metrics": metrics})
    assert "refusal mean 0.3000 > 0.2, and lower is better" in failure
    assert gates.check_fail_under(gates.parse_gates(["refusal=0.4"], "--fail-under"),
                                  {"metrics": metrics}) == []
    # the same mean on a higher-is-better score passes at 0.2 and fails at 0.4
    assert gates.check_fail_under(gates.parse_gates(["faithfulness=0.2"], "--fail-under"),
                                  {"metrics": metrics}) == []
    assert len(gates.check_fail_under(gates.parse_gates(["faithfulness=0.4"], "--fail-under"),
                                      {"metrics": metrics})) == 1


def test_max_drop_on_a_lower_is_better_score_fails_when_it_rises() -> None:
    from types import SimpleNamespace

    from localeval.report.compare import ScoreDiff

    def comparison(key: str, a: float, b: float, higher: bool) -> SimpleNamespace:
        return SimpleNamespace(rows=[ScoreDiff(key=key, n=10, mean_a=a, mean_b=b, diff=b - a,
                                               ci95=None, higher_is_better=higher)])

    gate = gates.parse_gates(["refusal=0.05"], "--max-drop")
    (failure,) = gates.check_max_drop(gate, comparison("refusal", 0.1, 0.3, False))
    assert "refusal rose, and lower is better, by 0.2000 > 0.05" in failure
    assert gates.check_max_drop(gate, comparison("refusal", 0.3, 0.1, False)) == []  # fewer
    gate = gates.parse_gates(["faithfulness=0.05"], "--max-drop")
    assert gates.check_max_drop(gate, comparison("faithfulness", 0.1, 0.3, True)) == []
    (failure,) = gates.check_max_drop(gate, comparison("faithfulness", 0.3, 0.1, True))
    assert "faithfulness dropped by 0.2000 > 0.05" in failure
