"""Check `run --estimate` against the real run it sizes, on dev samples.

Builds the dev pairs (scripts/provenance/dev_sets.py, data from ../shared/data/dev), takes `--n`
rows (default 20) in turn from the report halves of HaluEval QA, HaluQA, HaluEval summarization
and UHGEval (both sides of each pair), runs `localeval run --estimate --json`, then the real run
(`--metrics faithfulness,answer_relevance --profile small --no-cache`), and prints one JSON
object: per step the requests estimated and made, the prompt tokens read, generated and read
answer tokens, the seconds, and actual / estimate ratios.

    flock /tmp/localeval-cpu.lock .venv/bin/python scripts/bench/check_estimate.py [--n 20]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SETS = ("halueval", "halluqa", "halueval_summarization", "uhgeval")
METRICS = "faithfulness,answer_relevance"


def dev_rows(work: Path, n: int) -> Path:
    """n rows, taken in turn from the four sets' report pairs (side a, then b)."""
    dev = work / "dev"
    subprocess.run([sys.executable, str(ROOT / "scripts" / "provenance" / "dev_sets.py"),
                    "--out", str(dev), "--n", str(max(3, n))], check=True,
                   stdout=subprocess.DEVNULL)
    per_set: list[list[dict[str, Any]]] = []
    for name in SETS:
        rows = []
        for line in (dev / f"{name}-report.jsonl").read_text(encoding="utf-8").splitlines():
            pair = json.loads(line)
            rows += [{"id": f"{pair['pair_id']}/{side}", **pair[side]} for side in "ab"]
        per_set.append(rows)
    picked = [per_set[i % len(SETS)][i // len(SETS)] for i in range(n)]
    path = work / "rows.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in picked),
                    encoding="utf-8")
    return path


def localeval(args: list[str]) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "localeval", *args], env=env, text=True,
                          capture_output=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"localeval {' '.join(args[:1])} failed ({done.returncode}): "
                 f"{done.stderr.strip()[-500:]}")
    return done, wall


def ratio(actual: float, estimate: float | None) -> float | None:
    return round(actual / estimate, 3) if estimate else None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=20, help="samples (default 20)")
    parser.add_argument("--parallel", type=int, help="judge sequences (default: the run's)")
    parser.add_argument("--work", type=Path, help="folder for rows and runs (default: a temp one)")
    args = parser.parse_args()
    if args.n < 1:
        parser.error("--n must be 1 or more")
    work = args.work or Path(tempfile.mkdtemp(prefix="check-estimate-"))
    work.mkdir(parents=True, exist_ok=True)
    rows = dev_rows(work, args.n)
    common = [str(rows), "--out", str(work / "run"), "--metrics", METRICS, "--profile", "small",
              "--no-cache", *(["--parallel", str(args.parallel)] if args.parallel else [])]
    est_run, est_wall = localeval(["run", *common, "--estimate", "--json"])
    estimate = json.loads(est_run.stdout)
    _, real_wall = localeval(["run", *common, "--quiet", "--overwrite"])
    summary = json.loads((work / "run" / "summary.json").read_text(encoding="utf-8"))
    judge = summary["judge"]
    steps = {}
    for step in sorted(set(estimate["steps"]) | set(judge["calls_by_step"])):
        e = estimate["steps"].get(step, {})
        a = judge["tokens_by_step"].get(step, {})
        steps[step] = {
            "requests": {"estimate": e.get("requests", 0), "count": e.get("count"),
                         "actual": judge["calls_by_step"].get(step, 0)},
            "prompt_tokens_processed": {"estimate": e.get("prompt_tokens_processed", 0),
                                        "actual": a.get("prompt_tokens_processed", 0)},
            "generated_tokens": {"estimate": e.get("generated_tokens", 0),
                                 "actual": a.get("generated_tokens", 0)},
            "forced_tokens": {"estimate": e.get("forced_tokens", 0),
                              "actual": a.get("forced_tokens", 0)},
            "decode_s_actual": a.get("decode_s"),
        }
    total, t = estimate["total"], estimate.get("time") or {}
    seconds = t.get("seconds")
    out = {
        "samples": args.n,
        "parallel": estimate["parallel"],
        "command": f"python -m localeval run ROWS --out DIR {' '.join(common[3:])}",
        "steps": steps,
        "requests": {"estimate": total["requests"], "actual": judge["calls"],
                     "exact": all(s["requests"]["estimate"] == s["requests"]["actual"]
                                  for s in steps.values())},
        "prompt_tokens": {"estimate": total["prompt_tokens"], "actual": judge["prompt_tokens"]},
        "prompt_tokens_processed": {"estimate": total["prompt_tokens_processed"],
                                    "actual": judge["prompt_tokens_processed"],
                                    "ratio": ratio(judge["prompt_tokens_processed"],
                                                   total["prompt_tokens_processed"])},
        "generated_tokens": {"estimate": total["generated_tokens"],
                             "actual": judge["completion_tokens"],
                             "ratio": ratio(judge["completion_tokens"],
                                            total["generated_tokens"])},
        "forced_tokens": {"estimate": total["forced_tokens"], "actual": judge["forced_tokens"]},
        "seconds": {"estimate": seconds, "estimate_judge_s": t.get("judge_s"),
                    "actual_elapsed_s": summary["elapsed_s"],
                    "actual_judge_decode_s": judge["decode_s"],
                    "actual_process_wall_s": round(real_wall, 1),
                    "estimate_process_wall_s": round(est_wall, 1)},
        "time_ratio": ratio(summary["elapsed_s"], seconds),
        "within_30pct": seconds is not None and abs(summary["elapsed_s"] / seconds - 1) <= 0.3,
        "calibration": t.get("calibration"),
    }
    print(json.dumps(out, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
