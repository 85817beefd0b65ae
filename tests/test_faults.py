"""Fault injection (issue 11): hours of judging are never lost and a fault gets a clear message.

Each fault is injected into real runs of the fake judge (a few seconds in all): SIGKILL at random
moments then --resume; the disk filling up (RLIMIT_FSIZE in a forked child); results.jsonl and
run.json damaged by hand; two runs on one --out; the answer cache deleted or replaced by garbage;
a model file truncated between runs. After each, the folder holds exactly one result per id, equal
to an uninterrupted run's, or the command said in one line what to do.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import resource
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from localeval.cli import main
from localeval.config import Settings
from localeval.runner import run
from tests.conftest import fake_run_args
from tests.test_resume_kill import SleepyJudge

N_ROWS = 8


def write_rows(path: Path, n: int = N_ROWS, pad: int = 0) -> Path:
    rows = [
        {"id": f"s{i}", "question": f"What is item {i}?",
         "answer": f"Item {i} is a thing {i * 7}." + " More." * pad,
         "contexts": [f"Item {i} is described here with number {i * 7}."]}
        for i in range(n)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def settings(cache: Path | None) -> Settings:
    """Faithfulness by a scripted judge, behind the shield's forms alone: the meaning head
    would load the torch embedder in the parent, and a forked child of a process that has
    started torch's threads can hang (the rows hold no note to the evaluator either way)."""
    return Settings(metrics=["faithfulness"], claims="statements", language="en", parallel=2,
                    cache=cache, no_cache=cache is None, shield="forms")


def results(out: Path) -> dict[str, Any]:
    """id → what was scored. Asserts that every line parses and no id occurs twice."""
    lines = (out / "results.jsonl").read_text(encoding="utf-8").splitlines()
    records = [json.loads(line) for line in lines]
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids)), f"an id occurs twice: {ids}"
    return {r["id"]: {k: r[k] for k in ("scores", "details", "errors", "skipped")}
            for r in records}


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """An uninterrupted run of the same rows."""
    tmp = tmp_path_factory.mktemp("reference")
    data = write_rows(tmp / "data.jsonl")
    run(data, tmp / "out", settings(None), judge=SleepyJudge(0.0))
    return results(tmp / "out")


def fork(child: Callable[[], int], stderr: Path | None = None) -> int:
    """Run `child()` in a forked process (no interpreter start-up: a kill lands mid-run);
    its return value is the exit status."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 70
        try:
            if stderr is not None:
                sys.stderr = open(stderr, "w", encoding="utf-8")  # noqa: SIM115
            code = child()
        finally:
            sys.stderr.flush()
            os._exit(code)
    return pid


def wait(pid: int, timeout: float = 60) -> int:
    """Exit status of a forked child (-signal if killed)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.005)
    os.kill(pid, signal.SIGKILL)
    raise AssertionError("the child did not finish")


def test_sigkill_at_random_moments_then_resume_matches_an_uninterrupted_run(
    tmp_path: Path, reference: dict[str, Any]
) -> None:
    data = write_rows(tmp_path / "data.jsonl")
    rng = random.Random(11)

    def start(i: int) -> int:
        out, cache = tmp_path / f"out{i}", tmp_path / f"cache{i}.sqlite"
        return fork(lambda: run(data, out, settings(cache), judge=SleepyJudge(0.03)) and 0)

    began = time.monotonic()  # how long a whole run takes here, to kill within it
    assert wait(start(0)) == 0
    duration = time.monotonic() - began
    outcomes = {"killed": 0, "finished before the kill": 0}
    for i in range(1, 41):
        if outcomes["killed"] >= 22:
            break
        pid = start(i)
        time.sleep(rng.uniform(0.0, 0.9 * duration))
        os.kill(pid, signal.SIGKILL)
        status = wait(pid)
        outcomes["killed" if status == -signal.SIGKILL else "finished before the kill"] += 1
        out, cache = tmp_path / f"out{i}", tmp_path / f"cache{i}.sqlite"
        resumed = run(data, out, settings(cache), judge=SleepyJudge(0.0), resume=True)
        assert resumed.summary["complete"] is True
        assert results(out) == reference, f"kill {i}"
    assert outcomes["killed"] >= 20, outcomes


def test_disk_full_stops_with_one_line_and_resume_completes(
    tmp_path: Path, reference: dict[str, Any]
) -> None:
    data = write_rows(tmp_path / "data.jsonl")
    answers = tmp_path / "unused.json"
    answers.write_text("[]")
    out, err = tmp_path / "out", tmp_path / "stderr.txt"
    whole = tmp_path / "whole"
    run(data, whole, settings(None), judge=SleepyJudge(0.0))
    limit = (whole / "results.jsonl").stat().st_size // 2  # room for about half the samples
    assert (whole / "run.json").stat().st_size < limit

    def full_disk() -> int:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        from localeval import cli, executor

        original = executor.build_backends
        executor.build_backends = lambda s, m, judge=None, embedder=None, **kw: original(  # type: ignore[assignment]
            s, m, judge=SleepyJudge(0.0), embedder=embedder, **kw
        )
        return cli.main(fake_run_args(data, answers, out, "--quiet"))

    assert wait(fork(full_disk, stderr=err)) == 2
    message = err.read_text(encoding="utf-8").strip()
    assert message.count("\n") == 0 and "Traceback" not in message, message
    assert message.startswith("localeval: error: cannot write") and "--resume" in message
    partial = results(out)  # every line already there parses
    assert 0 < len(partial) < N_ROWS
    assert all(partial[k] == reference[k] for k in partial)
    same = Settings(metrics=["faithfulness"],
        claims="statements", judge="fake", fake_answers=answers, no_cache=True)
    resumed = run(data, out, same, judge=SleepyJudge(0.0), resume=True)
    assert resumed.summary["complete"] is True and results(out) == reference


def test_damaged_results_and_run_file(
    tmp_path: Path, reference: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_rows(tmp_path / "data.jsonl")
    out = tmp_path / "out"

    def fresh() -> Path:
        run(data, out, settings(None), judge=SleepyJudge(0.0), overwrite=True)
        return out / "results.jsonl"

    def resume() -> None:
        run(data, out, settings(None), judge=SleepyJudge(0.0), resume=True, log=print)

    path = fresh()  # a truncated last line: cut off and redone
    path.write_bytes(path.read_bytes()[:-25])
    resume()
    assert "cut short" in capsys.readouterr().out and results(out) == reference

    lines = fresh().read_text().splitlines(keepends=True)  # a duplicate id edited in by hand
    edited = json.loads(lines[2])
    edited["scores"] = {"faithfulness": 0.123}
    path.write_text("".join(lines) + json.dumps(edited) + "\n")
    resume()
    assert "holds id 's2' twice (lines 3 and 9); the later line is kept" in capsys.readouterr().out
    after = results(out)  # one line per id; the hand-edited one won
    assert after["s2"]["scores"] == {"faithfulness": 0.123}
    assert {k: v for k, v in after.items() if k != "s2"} == {
        k: v for k, v in reference.items() if k != "s2"
    }

    fresh()  # run.json that is not JSON, other settings: refused, no destructive advice
    (out / "run.json").write_text("{ not json")
    before = path.read_bytes()
    answers = tmp_path / "a.json"
    answers.write_text("[]")
    assert main(fake_run_args(data, answers, out, "--resume")) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "run.json that is unreadable" in err, err
    assert "summary.json shows other settings" in err and "new --out" in err
    assert "--overwrite" not in err and path.read_bytes() == before
    resume()  # the same settings as summary.json: run.json rebuilt, nothing redone or lost
    assert "rebuilt from summary.json" in capsys.readouterr().out and results(out) == reference


def test_second_run_on_the_same_out_is_refused_and_the_first_is_untouched(
    tmp_path: Path, reference: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_rows(tmp_path / "data.jsonl")
    out = tmp_path / "out"
    first = fork(lambda: run(data, out, settings(None), judge=SleepyJudge(0.2)) and 0)
    deadline = time.monotonic() + 30
    while not (out / "results.jsonl").is_file() and time.monotonic() < deadline:
        time.sleep(0.005)
    answers = tmp_path / "a.json"
    answers.write_text("[]")
    for extra in ((), ("--overwrite",), ("--resume",)):
        assert main(fake_run_args(data, answers, out, *extra)) == 2
        err = capsys.readouterr().err.strip()
        assert err.count("\n") == 0 and "in use by another localeval run" in err, err
        assert f"(pid {first})" in err
    assert wait(first) == 0
    assert results(out) == reference


def test_cache_deleted_or_garbage_between_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_rows(tmp_path / "data.jsonl", n=2)
    cache = tmp_path / "cache.sqlite"
    first = run(data, tmp_path / "a", settings(cache), judge=SleepyJudge(0.0))
    assert first.summary["judge"]["calls"] > 0
    cache.unlink()  # deleted: the next run asks again and fills a new cache
    again = run(data, tmp_path / "b", settings(cache), judge=SleepyJudge(0.0))
    assert again.summary["judge"]["calls"] == first.summary["judge"]["calls"] and cache.exists()

    for name in ("cache.sqlite-wal", "cache.sqlite-shm"):
        (tmp_path / name).unlink(missing_ok=True)
    garbage = b"this is not a database, it is garbage" * 200
    cache.write_bytes(garbage)  # unusable: a warning, and the run goes on without it (29.4)
    said: list[str] = []
    third = run(data, tmp_path / "c", settings(cache), judge=SleepyJudge(0.0), log=said.append)
    assert third.summary["judge"]["calls"] == first.summary["judge"]["calls"]
    assert f"answer cache {cache} cannot be used" in third.summary["judge"]["cache_error"]
    assert [m for m in said if m.startswith("warning:") and "without it" in m]
    assert cache.read_bytes() == garbage  # left as it was
    assert [r.scores for r in third.records] == [r.scores for r in first.records]


def test_model_truncated_between_runs_is_refused_before_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    payload = b"GGUF" + bytes(range(256)) * 64
    root = tmp_path / "models"
    root.mkdir()
    (root / "manifest.toml").write_text(
        '[profiles.tiny]\njudge = "j"\nembedder = "e"\n'
        f'[models.j]\nrole = "judge"\nfile = "j.gguf"\nsize = {len(payload)}\n'
        f'sha256 = "{hashlib.sha256(payload).hexdigest()}"\nsources = []\n'
        '[models.e]\nrole = "embedder"\ndir = "e"\nsize = 0\nsha256 = ""\nsources = []\n',
        encoding="utf-8",
    )
    (root / "j.gguf").write_bytes(payload)
    monkeypatch.setenv("LOCALEVAL_MODELS_DIR", str(root))
    assert main(["models", "verify", "j"]) == 0  # verified once: later runs trust the stamp
    (root / "j.gguf").write_bytes(payload[: len(payload) // 2])  # a copy cut short
    from localeval.models import backends

    def no_model(*_: Any, **__: Any) -> Any:
        raise AssertionError("the truncated model was loaded")

    monkeypatch.setattr(backends, "make_judge", no_model)
    data = write_rows(tmp_path / "data.jsonl", n=1)
    code = main(["run", str(data), "--out", str(tmp_path / "out"), "--profile", "tiny",
                 "--metrics", "faithfulness", "--no-cache", "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.count("\n") == 0
    assert "model j" in err and "truncated" in err and "models pull j" in err
    assert not (tmp_path / "out").exists()  # refused before the folder was touched
