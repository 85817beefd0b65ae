"""A run SIGKILLed halfway and started again completes, through the answer cache alone, with
results identical to an uninterrupted run; a rerun of a finished run makes no judge call.

The judge here sleeps and answers from the request's content (not from a queue), so answers
do not depend on the order requests arrive in — like a real greedy judge.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from localeval.judge.interface import JudgeReply, JudgeRequest

HERE = Path(__file__).resolve().parent


class SleepyJudge:
    """Waits `delay` seconds per request; the answer is a function of the request."""

    name = "sleepy"
    fingerprint = "sleepy-v1"

    def __init__(self, delay: float = 0.05) -> None:
        self.delay = delay
        self.calls = 0

    def sampling_key(self) -> str:
        return "sleepy"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.calls += 1
        await asyncio.sleep(self.delay)
        digest = hashlib.sha256(json.dumps(request.messages).encode()).digest()
        if request.step == "faithfulness_statements":
            shape = json.loads(request.answer_schema)["properties"]["statements"]
            n = shape.get("minItems", 1 + digest[0] % 3)
            claims = [f"claim {i} {digest[i]:02x}" for i in range(n)]
            nested = shape.get("items", {}).get("type") == "array"  # one list per sentence
            answer = {"statements": [[c] for c in claims] if nested else claims}
        elif request.step == "faithfulness_verdicts":
            n = json.loads(request.answer_schema)["properties"]["verdicts"]["minItems"]
            answer = {"verdicts": [{"reason": f"r{digest[i]}", "verdict": digest[i] % 2}
                                   for i in range(n)]}
        else:
            raise AssertionError(f"unexpected step {request.step}")
        text = json.dumps(answer)
        return JudgeReply(text=text, finish_reason="stop", prompt_tokens=100,
                          prompt_tokens_processed=100, completion_tokens=len(text) // 4)

    def close(self) -> None:
        pass


SCRIPT = """
import json, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from test_resume_kill import SleepyJudge
from localeval.results import records
from localeval.config import Settings
from localeval.runner import run

data, out, cache, delay = sys.argv[1], Path(sys.argv[2]), sys.argv[3], float(sys.argv[4])
if len(sys.argv) > 5:  # seconds between fsyncs of results.jsonl
    records.SYNC_INTERVAL_S = float(sys.argv[5])
again = {{"resume": True}} if sys.argv[6:] == ["resume"] else {{"overwrite": True}}
settings = Settings(metrics=["faithfulness"], cache=Path(cache), parallel=2, language="en")
outcome = run(data, out, settings, judge=SleepyJudge(delay), **again)
print(json.dumps(outcome.summary["judge"]))
"""


def _rows(n: int) -> list[dict[str, object]]:
    return [{"id": f"s{i}", "question": f"What is item {i}?",
             "answer": f"Item {i} is a thing {i * 7}.",
             "contexts": [f"Item {i} is described here with number {i * 7}."]} for i in range(n)]


def _records(out: Path) -> dict[str, dict[str, object]]:
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    recs = [json.loads(line) for line in lines if line.strip()]
    return {r["id"]: {k: r[k] for k in ("scores", "details", "errors", "skipped")} for r in recs}


def _cmd(script: Path, data: Path, out: Path, cache: Path, delay: float, *more: str) -> list[str]:
    return [sys.executable, str(script), str(data), str(out), str(cache), str(delay), *more]


def _run(
    script: Path, data: Path, out: Path, cache: Path, delay: float, *more: str
) -> dict[str, int]:
    done = subprocess.run(_cmd(script, data, out, cache, delay, *more), capture_output=True,
                          text=True,
                          timeout=120, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_sigkill_halfway_then_restart_matches_uninterrupted_run(tmp_path: Path) -> None:
    n, delay = 16, 0.15
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in _rows(n)) + "\n", encoding="utf-8")
    script = tmp_path / "run_sleepy.py"
    script.write_text(SCRIPT.format(tests=str(HERE)), encoding="utf-8")

    whole = _run(script, data, tmp_path / "whole", tmp_path / "cache-whole.sqlite", delay)
    total = whole["calls"]
    assert whole["cached"] == 0 and total >= n

    out, cache = tmp_path / "killed", tmp_path / "cache-killed.sqlite"
    proc = subprocess.Popen(_cmd(script, data, out, cache, delay), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if results.is_file() and len(results.read_text(encoding="utf-8").splitlines()) >= n // 2:
            break
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    done_before = len(results.read_text(encoding="utf-8").splitlines())
    assert n // 2 <= done_before < n

    restarted = _run(script, data, out, cache, delay)
    assert restarted["cached"] >= done_before  # the finished samples' answers were kept
    assert restarted["calls"] + restarted["cached"] == total
    assert 0 < restarted["calls"] < total
    assert _records(out) == _records(tmp_path / "whole")

    rerun = _run(script, data, tmp_path / "rerun", cache, delay)
    assert rerun["calls"] == 0 and rerun["cached"] == total
    assert _records(tmp_path / "rerun") == _records(tmp_path / "whole")


def test_sigkill_between_fsyncs_loses_no_written_record(tmp_path: Path) -> None:
    """results.jsonl is fsynced at most once a second; what a killed process wrote is still
    there (only a power cut can lose the last second, which --resume recomputes)."""
    n, delay = 16, 0.05
    data = tmp_path / "data.jsonl"
    data.write_text("\n".join(json.dumps(r) for r in _rows(n)) + "\n", encoding="utf-8")
    script = tmp_path / "run_sleepy.py"
    script.write_text(SCRIPT.format(tests=str(HERE)), encoding="utf-8")
    total = _run(script, data, tmp_path / "whole", tmp_path / "cache-whole.sqlite", delay)["calls"]

    out, cache = tmp_path / "killed", tmp_path / "cache-killed.sqlite"
    proc = subprocess.Popen(_cmd(script, data, out, cache, delay, "3600"),  # no fsync till the end
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if results.is_file() and len(results.read_text(encoding="utf-8").splitlines()) >= n // 2:
            break
        time.sleep(0.01)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL, "the run ended before it could be killed"
    written = _records(out)  # read back after the kill: every line the process wrote parses
    assert n // 2 <= len(written) < n
    whole = _records(tmp_path / "whole")
    assert all(written[k] == whole[k] for k in written)

    resumed = _run(script, data, out, cache, delay, "1", "resume")
    asked = resumed["calls"] + resumed["cached"]  # each sample asks the judge at least once
    assert asked <= total - len(written)  # the finished samples were kept, not asked again
    assert _records(out) == whole  # nothing lost
