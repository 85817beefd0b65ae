#!/usr/bin/env python
"""A whole query log through `localeval run --metrics retrieval`: peak memory, wall time, and a
run killed halfway then resumed with nothing lost. Prints one JSON object.

Generates N rows (default 200,000) of retrieved ids + relevant ids (no judge, no model), then
1. runs `python -m localeval run` on them in a subprocess: wall time and peak RSS (wait4);
2. runs again into a second folder, SIGKILLs it once results.jsonl holds about half the rows,
   resumes it with --resume, and checks that every id's scores equal the first run's;
3. with --profile, reruns the first run under cProfile and lists where the time went;
4. times closest_sentence (metrics/support/closest.py) against a 1 MB context: the index built once
   per material, then each statement.

    python scripts/bench_scale.py [--rows 200000] [--at 5,10] [--dir DIR] [--profile]
                                  [--no-fsync]

Targets (issue 18): peak RSS < 1 GiB and wall < 2 minutes for 200,000 rows on 2 cores.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import pstats
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PEAK_TARGET_MIB = 1024
WALL_TARGET_S = 120


def make_rows(path: Path, rows: int, seed: int = 0) -> None:
    """Rows as a retrieval log holds them: a query, 10 retrieved ids, 1-3 relevant ids."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as f:
        for i in range(rows):
            retrieved = [f"doc{rng.randrange(1_000_000)}" for _ in range(10)]
            relevant = rng.sample(retrieved, rng.randint(1, 3)) if rng.random() < 0.7 else []
            unretrieved = rng.randint(0 if relevant else 1, 1)  # a relevant doc not found
            relevant += [f"doc{rng.randrange(1_000_000)}" for _ in range(unretrieved)]
            row = {"id": f"q{i}", "question": f"query {i} of the log", "retrieved_ids": retrieved,
                   "expected_ids": relevant}
            f.write(json.dumps(row) + "\n")


def _command(data: Path, out: Path, args: argparse.Namespace, *extra: str,
             profile: Path | None = None) -> list:
    """`python -m localeval run` as a -c snippet: with --no-fsync, os.fsync does nothing (to
    measure what the rest costs; such a run is not crash-safe), with `profile` under cProfile."""
    code = ["import os, sys"]
    if args.no_fsync:
        code.append("os.fsync = lambda fd: None")
    code.append("from localeval.cli import main")
    if profile is not None:
        code.append(f"import cProfile; cProfile.run('main()', {str(profile)!r})")
    else:
        code.append("raise SystemExit(main())")
    return [sys.executable, "-c", "\n".join(code), "run", str(data), "--metrics", "retrieval",
            "--at", args.at, "--out", str(out), "--quiet", *extra]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}


def timed_run(cmd: list, kill_at: tuple[Path, int] | None = None) -> dict[str, Any]:
    """Run cmd; wall time, peak RSS (MiB) and exit status. With kill_at (results file, lines),
    SIGKILL the run once the file holds that many lines."""
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    killed_at = None
    if kill_at is not None:
        killed_at = _kill_when(proc, *kill_at)
    stderr = proc.stderr.read() if proc.stderr else b""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    out = {
        "wall_s": round(time.perf_counter() - started, 2),
        "peak_rss_mib": round(usage.ru_maxrss / 1024, 1),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "rc": proc.returncode,
    }
    if killed_at is not None:
        out["killed_with_lines"] = killed_at
    if proc.returncode not in (0, -signal.SIGKILL):
        out["stderr_tail"] = stderr.decode("utf-8", "replace")[-500:]
    return out


def _kill_when(proc: subprocess.Popen, results: Path, lines: int) -> int | None:
    """Count results.jsonl's lines as it grows; SIGKILL the run at `lines`."""
    seen, offset = 0, 0
    while proc.poll() is None:
        try:
            with open(results, "rb") as f:
                f.seek(offset)
                chunk = f.read()
        except FileNotFoundError:
            chunk = b""
        seen += chunk.count(b"\n")
        offset += len(chunk)
        if seen >= lines:
            proc.send_signal(signal.SIGKILL)
            return seen
        time.sleep(0.05)
    return None


def scores_by_id(results: Path) -> dict[str, dict]:
    out = {}
    with open(results, encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            out[record["id"]] = record["scores"]
    return out


def compare(a: Path, b: Path, rows: int) -> dict[str, Any]:
    """Every id of the dataset in both runs, with equal scores; and equal summaries."""
    first, second = scores_by_id(a / "results.jsonl"), scores_by_id(b / "results.jsonl")
    ids = {f"q{i}" for i in range(rows)}
    summary_a = json.loads((a / "summary.json").read_text())["metrics"]
    summary_b = json.loads((b / "summary.json").read_text())["metrics"]
    return {
        "missing_after_resume": len(ids - set(second)),
        "missing_in_uninterrupted": len(ids - set(first)),
        "differing_scores": sum(1 for i in ids if first.get(i) != second.get(i)),
        "same_summary": summary_a == summary_b,
    }


def profile_top(path: Path, n: int = 15) -> list[str]:
    text = io.StringIO()
    stats = pstats.Stats(str(path), stream=text)
    stats.sort_stats("tottime").print_stats(n)
    lines = [x.strip() for x in text.getvalue().splitlines() if x.strip()]
    start = next(i for i, x in enumerate(lines) if x.startswith("ncalls"))
    return lines[start : start + n + 1]


def time_closest_sentence(size: int = 1_000_000, statements: int = 50) -> dict[str, Any]:
    """Build the sentence index of a `size`-character context, then find each statement's
    closest sentence (before the index: 1.5-2 s per statement on this machine)."""
    sys.path.insert(0, str(ROOT))
    from localeval.metrics.support.closest import SentenceIndex, closest_sentence

    rng = random.Random(1)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(rng.randint(2, 9)))
             for _ in range(5000)]
    sentences: list[str] = []
    while sum(map(len, sentences)) + len(sentences) < size:
        n = rng.randint(5, 25)
        sentences.append(" ".join(rng.choice(words) for _ in range(n)).capitalize() + ".")
    context = " ".join(sentences)
    items = [" ".join(rng.choice(words) for _ in range(12)) for _ in range(statements)]
    t = time.perf_counter()
    SentenceIndex((context,))
    build = time.perf_counter() - t
    closest_sentence(items[0], [context])  # builds the cached index
    t = time.perf_counter()
    for item in items:
        closest_sentence(item, [context])
    return {"context_chars": len(context), "sentences": len(sentences),
            "index_build_s": round(build, 3),
            "per_statement_ms": round((time.perf_counter() - t) / statements * 1000, 3)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--at", default="5,10", help="retrieval cutoffs (default 5,10)")
    ap.add_argument("--dir", type=Path, help="work folder (default: a temporary one, removed)")
    ap.add_argument("--profile", action="store_true", help="also run once under cProfile")
    ap.add_argument("--no-fsync", action="store_true",
                    help="runs without fsync, to measure the rest (not crash-safe)")
    args = ap.parse_args(argv)
    work = args.dir or Path(tempfile.mkdtemp(prefix="bench_scale_"))
    work.mkdir(parents=True, exist_ok=True)
    data, full, cut = work / "rows.jsonl", work / "full", work / "killed"
    for folder in (full, cut):
        shutil.rmtree(folder, ignore_errors=True)
    try:
        t = time.perf_counter()
        make_rows(data, args.rows)
        report: dict[str, Any] = {
            "rows": args.rows, "at": args.at, "cpus": os.cpu_count(), "fsync": not args.no_fsync,
            "load_avg_before": os.getloadavg()[0],
            "generate_s": round(time.perf_counter() - t, 2),
            "data_mib": round(data.stat().st_size / 2**20, 1),
        }
        report["run"] = timed_run(_command(data, full, args))
        report["killed"] = timed_run(_command(data, cut, args),
                                     kill_at=(cut / "results.jsonl", args.rows // 2))
        report["resumed"] = timed_run(_command(data, cut, args, "--resume"))
        report["check"] = compare(full, cut, args.rows)
        report["closest_sentence_1mb"] = time_closest_sentence()
        if args.profile:
            prof = work / "run.prof"
            shutil.rmtree(full, ignore_errors=True)
            report["profiled_wall_s"] = timed_run(_command(data, full, args, profile=prof))[
                "wall_s"]
            report["profile_tottime"] = profile_top(prof)
        ok = (report["run"]["rc"] == 0 and report["resumed"]["rc"] == 0
              and not any(v for k, v in report["check"].items() if k != "same_summary")
              and report["check"]["same_summary"])
        report["nothing_lost"] = ok
        report["targets"] = {
            "peak_rss_under_1gib": max(report[k]["peak_rss_mib"] for k in ("run", "resumed"))
            < PEAK_TARGET_MIB,
            "wall_under_2min": report["run"]["wall_s"] < WALL_TARGET_S,
        }
    finally:
        if args.dir is None:
            shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(report, indent=1))
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
