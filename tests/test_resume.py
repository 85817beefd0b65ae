"""Nothing lost: results.jsonl grows as samples finish; Ctrl-C saves what is done and says how to
resume; `run --resume` skips finished samples (same settings only), redoes a sample whose row
changed and a line cut short by a crash; an existing run folder is never overwritten silently."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from localeval.cli import main
from localeval.config import Settings
from localeval.errors import UsageError
from localeval.judge.fake import FakeJudge
from localeval.judge.interface import JudgeRequest
from localeval.models.embed import HashEmbedder
from localeval.results import RunInterrupted, read_results
from localeval.runner import run
from tests.conftest import fake_run_args
from tests.signals import default_dispositions

REPO = Path(__file__).resolve().parent.parent
STATEMENTS = {"statements": [["The sky is blue in this sample.", "Grass is red in this sample."]]}
VERDICTS = {
    "verdicts": [{"reason": "stated", "verdict": 1}, {"reason": "not stated", "verdict": 0}]
}


def rows(n: int) -> list[dict[str, Any]]:
    return [
        {
            "id": f"s{i:02d}",
            "question": f"question {i}?",
            "answer": "The sky is blue and grass is red in this sample.",
            "contexts": [f"context {i}"],
        }
        for i in range(n)
    ]


def answers(n: int) -> dict[str, list[dict]]:
    return {"faithfulness_statements": [STATEMENTS] * n, "faithfulness_verdicts": [VERDICTS] * n}


def write_inputs(tmp_path: Path, n: int) -> tuple[Path, Path]:
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows(n)), encoding="utf-8")
    ans = tmp_path / "answers.json"
    ans.write_text(json.dumps(answers(n)), encoding="utf-8")
    return data, ans


def cli_args(data: Path, ans: Path, out: Path, *extra: str) -> list[str]:
    return fake_run_args(data, ans, out, *extra)


def result_ids(out: Path) -> list[str]:
    return [json.loads(line)["id"] for line in (out / "results.jsonl").read_text().splitlines()]


SLOW_CLI = """
import asyncio, sys
from localeval.judge.fake import FakeJudge
from localeval.cli import main

original = FakeJudge.complete

async def slow(self, request):
    await asyncio.sleep(0.15)
    return await original(self, request)

FakeJudge.complete = slow
sys.exit(main(sys.argv[1:]))
"""


def test_sigint_saves_progress_and_resume_ends_with_one_result_per_sample(tmp_path: Path) -> None:
    n = 12
    data, ans = write_inputs(tmp_path, n)
    out = tmp_path / "out"
    script = tmp_path / "slow_cli.py"
    script.write_text(SLOW_CLI, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "CI": ""}
    args = cli_args(data, ans, out)
    proc = subprocess.Popen(
        [sys.executable, str(script), *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=default_dispositions,
    )
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:  # wait until a few samples are on disk
        if results.exists() and len(results.read_text().splitlines()) >= 3:
            break
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    done = len(result_ids(out))
    assert 3 <= done < n
    assert f"interrupted: {done} of {n} samples done" in err
    assert "resume with: python -m localeval run " in err and err.rstrip().endswith("--resume")
    assert "Traceback" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["metrics"]["faithfulness"]["count"] == done
    assert "partial run" in (out / "report.html").read_text()

    assert main([*args, "--resume"]) == 0
    ids = result_ids(out)
    assert ids == [r["id"] for r in rows(n)]  # exactly one result per sample, in input order
    summary = json.loads((out / "summary.json").read_text())
    assert (
        summary["complete"] is True and summary["resumed"]["samples_from_earlier_sessions"] == done
    )
    assert summary["metrics"]["faithfulness"]["count"] == n
    assert summary["judge"]["calls"] == 2 * (n - done)  # only the missing samples were judged


def _start_slow_cli(tmp_path: Path, args: list[str], **kw: Any) -> subprocess.Popen[str]:
    script = tmp_path / "slow_cli.py"
    script.write_text(SLOW_CLI, encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(REPO), "CI": ""}
    kw.setdefault("preexec_fn", default_dispositions)
    return subprocess.Popen([sys.executable, str(script), *args], cwd=REPO, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _wait_for_results(proc: subprocess.Popen[str], out: Path, k: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        path = out / "results.jsonl"
        if path.exists() and len(path.read_text().splitlines()) >= k:
            return
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.02)
    raise AssertionError("no results appeared")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP], ids=["SIGTERM", "SIGHUP"])
def test_sigterm_and_sighup_stop_like_ctrl_c(tmp_path: Path, sig: signal.Signals) -> None:
    n = 40  # a loaded machine may let a short run end before the signal reaches it
    data, ans = write_inputs(tmp_path, n)
    out = tmp_path / "out"
    args = cli_args(data, ans, out)
    proc = _start_slow_cli(tmp_path, args)
    _wait_for_results(proc, out, 3)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err
    done = len(result_ids(out))
    assert 3 <= done < n
    assert f"stopped by {sig.name}: {done} of {n} samples done (saved in {out})" in err
    assert err.rstrip().endswith("--resume") and "Traceback" not in err
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is False and summary["metrics"]["faithfulness"]["count"] == done
    assert "partial run" in (out / "report.html").read_text() and (out / "report.md").is_file()

    assert main([*args, "--resume"]) == 0
    assert result_ids(out) == [r["id"] for r in rows(n)]
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and summary["metrics"]["faithfulness"]["count"] == n
    assert summary["judge"]["calls"] == 2 * (n - done)  # nothing finished was lost or redone


def _nohup() -> None:
    default_dispositions()
    signal.signal(signal.SIGHUP, signal.SIG_IGN)


def test_sighup_ignored_by_nohup_stays_ignored(tmp_path: Path) -> None:
    data, ans = write_inputs(tmp_path, 4)
    out = tmp_path / "out"
    proc = _start_slow_cli(tmp_path, cli_args(data, ans, out),
                           preexec_fn=_nohup)
    _wait_for_results(proc, out, 1)
    proc.send_signal(signal.SIGHUP)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert json.loads((out / "summary.json").read_text())["complete"] is True


def test_existing_results_need_resume_or_overwrite(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, ans = write_inputs(tmp_path, 2)
    out = tmp_path / "out"
    assert main(cli_args(data, ans, out)) == 0
    before = (out / "results.jsonl").read_text()
    assert main(cli_args(data, ans, out)) == 2
    err = capsys.readouterr().err
    assert "already holds results (2 samples" in err and "--resume" in err and "--overwrite" in err
    assert (out / "results.jsonl").read_text() == before  # untouched
    assert main(cli_args(data, ans, out, "--overwrite")) == 0
    assert result_ids(out) == ["s00", "s01"]
    with pytest.raises(SystemExit) as usage:  # argparse: mutually exclusive
        main(cli_args(data, ans, out, "--overwrite", "--resume"))
    assert usage.value.code == 2


def test_resume_refuses_results_made_with_other_settings(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data, ans = write_inputs(tmp_path, 2)
    out = tmp_path / "out"
    assert main(cli_args(data, ans, out)) == 0
    capsys.readouterr()
    assert main(cli_args(data, ans, out, "--resume", "--max-tokens", "512")) == 2
    err = capsys.readouterr().err
    assert "cannot resume" in err and "max_tokens: 768 then, 512 now" in err
    # speed-only settings may change between sessions
    assert main(cli_args(data, ans, out, "--resume", "--parallel", "3")) == 0


def fake_run(
    samples: list[dict], out: Path, *, resume: bool = False, **kw: Any
) -> tuple[Any, FakeJudge]:
    judge = FakeJudge(answers(len(samples)))
    outcome = run(
        samples,
        out,
        Settings(no_cache=True, claims="statements", metrics=["faithfulness"]),
        judge=judge,
        embedder=HashEmbedder(),
        resume=resume,
        **kw,
    )
    return outcome, judge


def test_cut_last_line_is_redone_and_bad_middle_line_ignored(tmp_path: Path) -> None:
    out = tmp_path / "out"
    samples = rows(5)
    fake_run(samples, out)
    path = out / "results.jsonl"
    lines = path.read_bytes().split(b"\n")
    lines[1] = b'{"id": "s01", "scores": {"faith'  # garbage in the middle (edited by hand)
    path.write_bytes(b"\n".join(lines[:4]) + b"\n" + lines[4][:40])  # power cut in the last line
    read = read_results(path)
    assert read.incomplete_tail and read.bad_lines == [2, 5] and len(read.records) == 3
    logs: list[str] = []
    outcome, judge = fake_run(samples, out, resume=True, log=logs.append)
    assert {r.sample_id for r in judge.requests} == {"s01", "s04"}
    assert result_ids(out) == [s["id"] for s in samples]
    assert [r.id for r in outcome.records] == [s["id"] for s in samples]
    assert any("cut short" in m for m in logs) and any("line(s) 2" in m for m in logs)


def test_changed_row_is_redone_and_finished_run_asks_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    samples = rows(4)
    fake_run(samples, out)
    outcome, judge = fake_run(samples, out, resume=True)
    assert judge.requests == []  # all done: the judge is not even asked
    assert outcome.summary["models"]["judge"]["name"] == "fake"  # kept from the first session
    samples[2]["answer"] = "In this sample the sky is blue and the grass is red."
    outcome, judge = fake_run(samples, out, resume=True)
    assert {r.sample_id for r in judge.requests} == {"s02"}
    assert outcome.summary["metrics"]["faithfulness"]["count"] == 4
    assert result_ids(out) == [s["id"] for s in samples]
    assert (
        next(r for r in outcome.records if r.id == "s02").answer
        == "In this sample the sky is blue and the grass is red."
    )


class WatchingJudge(FakeJudge):
    """Records how many lines results.jsonl holds whenever a request arrives."""

    def __init__(self, answers: Any, path: Path) -> None:
        super().__init__(answers)
        self.path, self.seen = path, []

    async def complete(self, request: JudgeRequest):  # type: ignore[no-untyped-def]
        self.seen.append(len(self.path.read_text().splitlines()) if self.path.exists() else 0)
        return await super().complete(request)


def test_results_are_on_disk_as_samples_finish(tmp_path: Path) -> None:
    out = tmp_path / "out"
    judge = WatchingJudge(answers(4), out / "results.jsonl")
    run(
        rows(4),
        out,
        Settings(no_cache=True, claims="statements", metrics=["faithfulness"], parallel=1),
        judge=judge,
        embedder=HashEmbedder(),
    )
    assert max(judge.seen) >= 2  # later samples were judged while earlier ones were already saved


def test_keyboard_interrupt_in_library_raises_run_interrupted(tmp_path: Path) -> None:
    class InterruptingJudge(FakeJudge):
        async def complete(self, request: JudgeRequest):  # type: ignore[no-untyped-def]
            if len(self.requests) >= 4:
                raise KeyboardInterrupt
            return await super().complete(request)

    out = tmp_path / "out"
    with pytest.raises(RunInterrupted) as info:
        run(
            rows(5),
            out,
            Settings(no_cache=True, claims="statements", metrics=["faithfulness"], parallel=1),
            judge=InterruptingJudge(answers(5)),
            embedder=HashEmbedder(),
        )
    assert info.value.done == 2 and info.value.total == 5 and info.value.exit_code == 130
    assert result_ids(out) == ["s00", "s01"]
    assert json.loads((out / "summary.json").read_text())["complete"] is False


def test_lost_run_file_is_rebuilt_from_the_summary_or_refused_without_deleting(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    fake_run(rows(2), out)
    (out / "run.json").write_text("")  # emptied (a crash before the rename reached the disk)
    before = (out / "results.jsonl").read_bytes()
    outcome, judge = fake_run(rows(3), out, resume=True)  # summary.json: same settings
    assert outcome.summary["complete"] and len(judge.requests) == 2  # only s02 judged
    assert json.loads((out / "run.json").read_text())["written_by"] == "localeval"

    (out / "run.json").unlink()
    (out / "summary.json").unlink()
    before = (out / "results.jsonl").read_bytes()
    with pytest.raises(UsageError, match=r"no run\.json.*new --out \(nothing in .* is deleted"):
        fake_run(rows(3), out, resume=True)
    assert (out / "results.jsonl").read_bytes() == before
