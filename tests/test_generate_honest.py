"""Issue 52 item 4-5: the review page keeps its write button past the last decision; the closing
table fits 100 columns; --estimate counts the run's requests; the tiny judge refuses to generate
unless asked to proceed."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest


@pytest.mark.browser
def test_the_review_page_writes_the_kept_set_after_the_last_decision(tmp_path: Path) -> None:
    from tests.test_label_page import TESTSET
    from tests.test_label_page_browser import (
        KEYS,
        chromium_page,
        click,
        key,
        label_server,
        problems,
        wait_for,
    )

    testset = tmp_path / "testset.jsonl"
    testset.write_text("".join(json.dumps(r) + "\n" for r in TESTSET), encoding="utf-8")
    decisions = testset.with_name("testset.decisions.jsonl")
    KEYS["a"] = ("KeyA", 65)
    with chromium_page() as page, label_server(testset) as (_, url):
        page.call("Page.navigate", url=url)
        page.wait_event("Page.loadEventFired")
        wait_for(page, "document.body.dataset.ready === '1'")
        for n, row in enumerate(TESTSET, 1):
            wait_for(page, f"item && item.row.id === '{row['id']}'")
            key(page, "a")
            deadline = time.monotonic() + 20
            while not decisions.exists() or len(decisions.read_text().splitlines()) < n:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        wait_for(page, "!document.getElementById('done').hidden")
        # shown: not hidden itself nor inside a hidden section, so laid out
        assert wait_for(page, "document.getElementById('write').offsetParent !== null")
        click(page, "#write")
        wait_for(page, "document.getElementById('written').textContent !== ''")
        assert not problems(page, url)
    kept = testset.with_name("testset.kept.jsonl").read_text().splitlines()
    assert [json.loads(x)["id"] for x in kept] == [r["id"] for r in TESTSET]


def test_the_closing_table_fits_100_columns_and_gives_rows_per_hour(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from localeval.cli.generate import report_table
    from localeval.generate.filters import FILTERS
    from tests.test_generate import DOCS, RuleJudge, run_gen

    made = run_gen([DOCS], tmp_path / "t.jsonl", RuleJudge(), n=4, settings={"no_cache": True})
    report = made.report
    # every filter dropped some (the widest the table gets), at a measured time
    for counts in report["by_kind"].values():
        counts.update({f: 1234 for f in FILTERS})
    report |= {"kept": 18, "seconds": 648.0, "seconds_per_kept_question": 36.0}
    lines = report_table(report).splitlines()
    assert max(map(len, lines)) <= 100, max(lines, key=len)
    text = " ".join(lines)
    assert all(f"{f} 1234" in text for f in FILTERS)  # nothing cut away
    assert set(report["by_kind"]) <= {line.split()[0] for line in lines}
    assert lines[-1].endswith("(36.0 s per kept row, 100 rows per hour)")


@pytest.mark.parametrize("how", [["--profile", "tiny"], ["--profile", "tiny", "--config"]])
def test_the_tiny_judge_refuses_to_generate_unless_asked_to_proceed(
        how: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from localeval.cli import main
    from localeval.cli.generate import WEAK_JUDGE_MEASURED
    from tests.test_generate import DOCS

    answers = tmp_path / "answers.json"
    answers.write_text("[]", "utf-8")  # the fake judge has no answer: every request fails
    if how[-1] == "--config":  # the profile set in a settings file, not by the flag
        config = tmp_path / "localeval.toml"
        config.write_text('profile = "tiny"\n', "utf-8")
        how = ["--config", str(config)]
    out = tmp_path / "t.jsonl"
    args = ["generate", str(DOCS / "en"), "--out", str(out), "--judge", "fake",
            "--fake-answers", str(answers), "--n", "1", "--quiet", "--no-cache", *how]
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--allow-weak-judge" in err
    assert WEAK_JUDGE_MEASURED in err and " wrong" in err
    assert not out.exists()
    # asked to proceed, it generates (here nothing is kept: the fake judge has no answer)
    assert main([*args, "--allow-weak-judge"]) == 1
    assert "no question kept" in capsys.readouterr().err


def test_the_small_judge_or_another_gguf_is_not_refused(tmp_path: Path) -> None:
    from localeval.cli.generate import weak_judge
    from localeval.config import Settings

    assert weak_judge(Settings(profile="tiny"))
    assert not weak_judge(Settings(profile="small"))
    assert not weak_judge(Settings(profile="tiny", judge_model=tmp_path / "other.gguf"))


def test_the_estimate_bounds_the_run_and_counts_its_drafts_exactly(tmp_path: Path) -> None:
    """Issue 52 item 5: "cached 120 of 44 requests": the dry run answered every draft with the
    same placeholder strings, so two drafts' checks were one request (served from the
    estimate's memory, counted as cached), and a placeholder subject, being no name, was never
    renamed: the "at most" fell below the run (generate_rename 10 against 16)."""
    from collections import Counter

    from localeval.config import Settings
    from localeval.generate.estimate import estimate
    from localeval.generate.pipeline import GenerateOptions
    from tests.test_generate import DOCS, RuleJudge, run_gen

    docs = tmp_path / "docs"
    docs.mkdir()
    for name in ("bees.md", "bridge.md", "tea.md"):
        (docs / name).write_text((DOCS / "en" / name).read_text("utf-8"), "utf-8")
    judge = RuleJudge()  # --n 100: every job is drafted, as in the estimate
    made = run_gen([docs], None, judge, n=100, settings={"cache": tmp_path / "run.sqlite"})
    ran = Counter(r.step for r in judge.requests)
    answers = tmp_path / "answers.json"
    answers.write_text("[]", "utf-8")
    found = estimate([docs], Settings(judge="fake", fake_answers=answers,
                                      cache=tmp_path / "estimate.sqlite"),
                     GenerateOptions(n=100, min_tokens=10))
    steps, total = found["steps"], found["total"]
    assert found["samples"] == made.report["candidates_drafted"]
    # the drafts: exact, and the lower bound
    assert steps["generate_single"]["count"] == "exact"
    assert steps["generate_single"]["requests"] == ran["generate_single"] == total["at_least"]
    # every other step: at most what every draft checked in full asks, never below the run
    for step, n in ran.items():
        assert n <= steps[step]["requests"], step
    assert total["at_least"] <= sum(ran.values()) <= total["requests"]
    # a fresh cache serves nothing; cached is per step and never more than asked
    assert total["cached"] == sum(s["cached"] for s in steps.values()) == 0
