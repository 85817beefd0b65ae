"""Durability of the run folder (issue 18, items 9 and 13): summary.json and run.json are fsynced
(file, then folder) around their rename; a failing fsync stops the run with one line and loses
nothing written; results.jsonl is fsynced at most once a second, not once per record; a disk that
fills up at the last step (a real tmpfs, and RLIMIT_FSIZE) never fails a run whose samples are
all done — the ordered copy is skipped, or the summary and report come with --resume."""

from __future__ import annotations

import asyncio
import errno
import itertools
import json
import os
import re
import resource
import stat
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from localeval.cli import main
from localeval.errors import OutputError
from localeval.judge.interface import JudgeReply, JudgeRequest
from localeval.results import records
from localeval.results.folder import OutputFolder, load_run
from localeval.results.runfiles import write_json
from localeval.runner import run
from tests.conftest import fake_run_args
from tests.test_faults import fork, results, settings, wait, write_rows
from tests.test_resume_kill import SleepyJudge


def _path_of(fd: int) -> str:
    return os.readlink(f"/proc/self/fd/{fd}")


needs_proc = pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")


@needs_proc
def test_json_files_are_fsynced_before_and_after_the_rename(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        kind = "dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file"
        events.append(f"fsync {kind} {Path(_path_of(fd)).name}")
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        events.append(f"rename to {Path(dst).name}")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    write_json(tmp_path / "summary.json", {"a": 1})
    assert len(events) == 3 and events[0].startswith("fsync file .summary.json.")
    assert events[1:] == ["rename to summary.json", f"fsync dir {tmp_path.name}"]
    assert json.loads((tmp_path / "summary.json").read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["summary.json"]  # no temporary left


def _fail_fsync_of(monkeypatch: pytest.MonkeyPatch, pattern: str) -> list[str]:
    """os.fsync raises EIO for files whose name matches `pattern`; returns the names it failed."""
    failed: list[str] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        name = Path(_path_of(fd)).name
        if re.fullmatch(pattern, name):
            failed.append(name)
            raise OSError(errno.EIO, "Input/output error")
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return failed


@needs_proc
def test_failing_fsync_of_results_mid_run_stops_with_one_line_and_loses_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = write_rows(tmp_path / "data.jsonl")
    out = tmp_path / "out"
    monkeypatch.setattr(records, "SYNC_INTERVAL_S", 0.01)  # the background sync fails mid-run
    failed = _fail_fsync_of(monkeypatch, r"results\.jsonl")
    with pytest.raises(OutputError) as info:
        run(data, out, settings(None), judge=SleepyJudge(0.05))
    message = str(info.value)
    assert failed and "\n" not in message and "Input/output error" in message
    assert "results.jsonl" in message and "--resume" in message
    partial = results(out)  # every line written is still there and parses
    assert 0 < len(partial) < len(reference) and all(partial[k] == reference[k] for k in partial)
    monkeypatch.undo()
    resumed = run(data, out, settings(None), judge=SleepyJudge(0.0), resume=True)
    assert resumed.summary["complete"] is True and results(out) == reference


@needs_proc
def test_failing_fsync_of_the_summary_keeps_every_result_and_resume_writes_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, reference: dict[str, Any],
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = write_rows(tmp_path / "data.jsonl")
    out, answers = tmp_path / "out", tmp_path / "a.json"
    answers.write_text("[]")
    from localeval.models import backends

    original = backends.build_backends

    def sleepy_backends() -> None:  # the CLI's judge answers as SleepyJudge does
        monkeypatch.setattr(
            "localeval.executor.build_backends",
            lambda s, m, judge=None, embedder=None, **kw: original(s, m, judge=SleepyJudge(0.0),
                                                                 **kw),
        )

    sleepy_backends()
    args = fake_run_args(data, answers, out)
    failed = _fail_fsync_of(monkeypatch, r"\.summary\.json\..*\.tmp")
    assert main(args) == 2
    err = capsys.readouterr().err.strip()
    assert failed and err.count("\n") == 0 and "Traceback" not in err, err
    assert "cannot write" in err and "summary.json" in err and "all 8 finished samples" in err
    assert "--resume" in err and not (out / "summary.json").exists()
    assert results(out) == reference  # every sample saved, in order
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]
    monkeypatch.undo()
    sleepy_backends()
    assert main([*args, "--resume"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True and not (summary["judge"] or {}).get("calls")
    assert (out / "report.html").is_file()


@needs_proc
def test_results_are_fsynced_at_most_once_a_second_not_per_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_rows(tmp_path / "data.jsonl", n=300)
    calls: list[float] = []
    real = os.fsync

    def fsync(fd: int) -> None:
        if _path_of(fd).endswith("results.jsonl"):
            calls.append(time.monotonic())
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    began = time.monotonic()
    outcome = run(data, tmp_path / "out", settings(None), judge=SleepyJudge(0.0))
    elapsed = time.monotonic() - began
    assert outcome.summary["complete"] and len(outcome.records) == 300
    assert 1 <= len(calls) <= elapsed / records.SYNC_INTERVAL_S + 3, (len(calls), elapsed)
    gaps = [b - a for a, b in itertools.pairwise(calls)][:-1]  # the last: at close
    assert all(g >= 0.9 * records.SYNC_INTERVAL_S for g in gaps), gaps


class ReverseJudge(SleepyJudge):
    """Answers as SleepyJudge, later rows sooner: results.jsonl ends up out of input order."""

    def __init__(self, n: int) -> None:
        super().__init__(0.0)
        self.n = n

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        item = int(re.search(r"item (\d+)", json.dumps(request.messages), re.I).group(1))
        await asyncio.sleep(0.002 * (self.n - item))
        return await super().complete(request)


def _settings_all_at_once(n: int) -> Any:
    return settings(None).model_copy(update={"parallel": n})


@pytest.fixture
def tiny_fs(tmp_path: Path) -> Iterator[Path]:
    """A real 2 MB tmpfs (needs root and permission to mount; skipped otherwise)."""
    where = tmp_path / "tmpfs"
    where.mkdir()
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(where)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip() or 'not root'}); "
                    "the RLIMIT_FSIZE variant below still runs")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _fill(fs: Path, leave: int) -> Path:
    """Fill the file system up to `leave` free bytes with a file; returns it."""
    filler = fs / "filler.bin"
    free = os.statvfs(fs).f_bavail * os.statvfs(fs).f_frsize
    with open(filler, "wb") as f:
        f.write(b"\0" * max(0, free - leave))
    return filler


def _full_before_finish(monkeypatch: pytest.MonkeyPatch, fs: Path, leave: int) -> list[Path]:
    """Another program fills the disk while the run's last samples finish."""
    fillers: list[Path] = []
    original = OutputFolder.finish

    def finish(self: OutputFolder, *args: Any, **kw: Any) -> Any:
        fillers.append(_fill(fs, leave))
        return original(self, *args, **kw)

    monkeypatch.setattr(OutputFolder, "finish", finish)
    return fillers


N_BIG = 200


def test_full_tmpfs_at_the_last_step_finishes_without_an_ordered_copy(
    tmp_path: Path, tiny_fs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = write_rows(tmp_path / "data.jsonl", n=N_BIG, pad=20)
    ref_out = tmp_path / "ref"
    run(data, ref_out, _settings_all_at_once(N_BIG), judge=ReverseJudge(N_BIG))
    reference = results(ref_out)
    size = (ref_out / "results.jsonl").stat().st_size
    assert size > 150_000  # room for the summary and reports (~40 KB), not for a second copy

    _full_before_finish(monkeypatch, tiny_fs, leave=100_000)
    out, notes = tiny_fs / "out", []
    outcome = run(data, out, _settings_all_at_once(N_BIG), judge=ReverseJudge(N_BIG),
                  log=notes.append)
    assert outcome.summary["complete"] is True
    assert any("no room to rewrite" in n and "No space left" in n for n in notes), notes
    assert results(out) == reference  # every sample, once; left in completion order
    ids = [json.loads(line)["id"] for line in (out / "results.jsonl").read_text().splitlines()]
    assert ids != sorted(ids, key=lambda i: int(i[1:]))
    assert [r.id for r in outcome.records] == [f"s{i}" for i in range(N_BIG)]
    assert [r.id for r in load_run(out).records] == [f"s{i}" for i in range(N_BIG)]
    assert (out / "summary.json").is_file() and (out / "report.html").is_file()
    assert not [p for p in out.iterdir() if p.name.endswith(".tmp")]


def test_full_tmpfs_before_the_summary_then_resume_once_space_is_freed(
    tmp_path: Path, tiny_fs: Path, monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    data = write_rows(tmp_path / "data.jsonl", n=N_BIG, pad=20)
    fillers = _full_before_finish(monkeypatch, tiny_fs, leave=0)
    out = tiny_fs / "out"
    with pytest.raises(OutputError) as info:
        run(data, out, _settings_all_at_once(N_BIG), judge=ReverseJudge(N_BIG))
    message = str(info.value)
    assert "\n" not in message and "No space left" in message
    assert f"all {N_BIG} finished samples are saved" in message and "--resume" in message
    assert len(results(out)) == N_BIG
    monkeypatch.undo()
    fillers[0].unlink()  # space freed
    judge = ReverseJudge(N_BIG)
    resumed = run(data, out, _settings_all_at_once(N_BIG), judge=judge, resume=True)
    assert resumed.summary["complete"] is True and judge.calls == 0
    assert (out / "summary.json").is_file() and (out / "report.html").is_file()
    ids = [json.loads(line)["id"] for line in (out / "results.jsonl").read_text().splitlines()]
    assert ids == [f"s{i}" for i in range(N_BIG)]  # ordered now that there is room


def test_file_size_limit_at_the_last_step_then_resume_writes_summary_and_report(
    tmp_path: Path, reference: dict[str, Any]
) -> None:
    """The RLIMIT_FSIZE variant (runs where no tmpfs can be mounted): report.html is larger than
    results.jsonl here, so the limit lets every sample be saved and stops the last step."""
    data = write_rows(tmp_path / "data.jsonl", pad=2500)
    whole = tmp_path / "whole"
    run(data, whole, settings(None), judge=SleepyJudge(0.0))
    saved, html = ((whole / n).stat().st_size for n in ("results.jsonl", "report.html"))
    assert saved * 1.2 < html
    limit = int(saved * 1.1)
    out, err = tmp_path / "out", tmp_path / "stderr.txt"

    def limited() -> int:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
        try:
            run(data, out, settings(None), judge=SleepyJudge(0.0))
        except OutputError as exc:
            print(f"localeval: error: {exc}", file=__import__("sys").stderr)
            return 2
        return 0

    assert wait(fork(limited, stderr=err)) == 2
    message = err.read_text(encoding="utf-8").strip()
    assert message.count("\n") == 0 and "File too large" in message, message
    assert "all 8 finished samples are saved" in message and "--resume" in message
    assert results(out).keys() == results(whole).keys()
    judge = SleepyJudge(0.0)
    resumed = run(data, out, settings(None), judge=judge, resume=True)
    assert resumed.summary["complete"] is True and judge.calls == 0
    assert results(out) == results(whole) and (out / "report.html").is_file()


@pytest.fixture(scope="module")
def reference(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    tmp = tmp_path_factory.mktemp("reference")
    data = write_rows(tmp / "data.jsonl")
    run(data, tmp / "out", settings(None), judge=SleepyJudge(0.0))
    return results(tmp / "out")
