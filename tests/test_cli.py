"""The command line: run with the fake judge, listing metrics, one-line errors and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from localeval.cli import main
from tests.conftest import EXAMPLE


def test_run_writes_results_and_summary_and_names_bad_rows(
    fake_cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d.jsonl"
    good = {
        "id": "g",
        "question": "q?",
        "answer": "Paris is in France.",
        "contexts": ["Paris is in France."],
    }
    data.write_text(
        "\n".join(
            [
                json.dumps(good),
                "{broken",
                json.dumps({"id": "na", "question": "q", "contexts": ["c"]}),
            ]
        )
        + "\n"
    )
    answers = [
        {"statements": [["Paris is in France."]]},
        {"verdicts": [{"reason": "stated", "verdict": 1}]},
    ]
    out = tmp_path / "out"
    assert fake_cli(data, answers, out) == 0
    err = capsys.readouterr().err
    assert "line 2: malformed JSON" in err and "na (line 3) faithfulness: needs 'answer'" in err
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert [r["id"] for r in records] == ["g", "na"]
    assert records[0]["scores"] == {"faithfulness": 1.0, "faithfulness.greedy": 1.0,
                                    "faithfulness.all_supported": 1.0}
    summary = json.loads((out / "summary.json").read_text())
    assert summary["metrics"]["faithfulness"]["mean"] == 1.0
    assert summary["dataset"]["input_errors"][0]["line"] == 2
    assert summary["judge"]["calls"] == 2 and summary["models"]["judge"]["name"] == "fake"
    assert "en/faithfulness_statements.j2" in summary["prompts"]


def test_unknown_metric_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["run", str(EXAMPLE), "--out", str(tmp_path), "--metrics", "faithfulnes"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "did you mean 'faithfulness'" in err


def test_missing_dataset_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", str(tmp_path / "nope.jsonl"), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("localeval: error:") and "not found" in err and "\n" not in err


def test_fake_judge_without_answers_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert (
        main(
            [
                "run",
                str(EXAMPLE),
                "--out",
                str(tmp_path),
                "--judge",
                "fake",
                "--metrics",
                "faithfulness",
            ]
        )
        == 2
    )
    assert "--fake-answers" in capsys.readouterr().err


def test_metrics_lists_required_fields(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics"]) == 0
    out = capsys.readouterr().out
    assert "faithfulness" in out and "needs: answer, contexts" in out


def test_a_command_line_builds_only_the_options_of_the_command_it_names() -> None:
    """`run` does not declare the options of generate, meta-eval, retrieval or verifier
    (cli/parser.OWN_MODULE); `--help` and the named command still see them."""
    import argparse

    from localeval.cli.parser import build_parser

    def options(argv: list[str] | None, command: str) -> set[str]:
        parser = build_parser(argv)
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        return set(sub.choices[command]._option_string_actions)

    assert "--chunk-tokens" not in options(["run", "d.jsonl"], "generate")
    assert "--chunk-tokens" in options(["generate", "docs"], "generate")
    assert "--chunk-tokens" in options(["--models-dir", "m", "generate", "docs"], "generate")
    assert "--chunk-tokens" in options(None, "generate")
    assert "--qrels" in options(["--help"], "retrieval")


@pytest.mark.parametrize("where", ["before", "after"])
def test_debug_shows_the_traceback_before_or_after_the_subcommand(
        tmp_path: Path, where: str) -> None:
    """A Low item of issue 41: `--debug` worked only before the subcommand."""
    from localeval.errors import LocalevalError

    args = ["run", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o")]
    with pytest.raises(LocalevalError):
        main(["--debug", *args] if where == "before" else [*args, "--debug"])
