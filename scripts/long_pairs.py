"""Pairwise agreement of a `localeval run` over a set built by scripts/build_long_dev.py.

Reads the built rows (their `pair` and `preferred` fields) and the run's results.jsonl and
summary.json; prints one JSON object: pairs, wins / ties / losses, pairwise accuracy (a pair with
an unscored side is a loss), unscored samples, and the judge's generated tokens per sample.
    python scripts/long_pairs.py runs/long_1x.jsonl runs/long-1x --metric faithfulness
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rows", type=Path, help="the built JSONL")
    parser.add_argument("run", type=Path, help="the run's output folder")
    parser.add_argument("--metric", default="faithfulness")
    args = parser.parse_args()
    try:
        rows = [json.loads(x) for x in args.rows.read_text(encoding="utf-8").splitlines()]
        results = [json.loads(x) for x in
                   (args.run / "results.jsonl").read_text(encoding="utf-8").splitlines()]
        summary = json.loads((args.run / "summary.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        sys.exit(f"error: {exc}")
    score = {r["id"]: r.get("scores", {}).get(args.metric) for r in results}
    pairs: dict[str, dict[bool, float | None]] = {}
    for r in rows:
        pairs.setdefault(r["pair"], {})[bool(r["preferred"])] = score.get(r["id"])
    out = {"wins": 0, "ties": 0, "losses": 0}
    per_language: dict[str, list[float]] = {}
    for pid, sides in sorted(pairs.items()):
        good, bad = sides.get(True), sides.get(False)
        result = 0.0 if good is None or bad is None else (
            0.5 if abs(good - bad) < 1e-9 else float(good > bad))
        out[{1.0: "wins", 0.5: "ties", 0.0: "losses"}[result]] += 1
        per_language.setdefault(pid.split("-")[1], []).append(result)
    n = len(pairs)
    judge = summary.get("judge") or {}
    owner = args.metric.split(".")[0]  # faithfulness.soft: faithfulness's details
    retries = sum(int((r.get("details", {}).get(owner) or {}).get("judge_retries", 0))
                  for r in results)
    print(json.dumps({
        "samples": len(rows), "pairs": n,
        "unscored_samples": sum(score.get(r["id"]) is None for r in rows),
        "pairwise_accuracy": round((out["wins"] + 0.5 * out["ties"]) / n, 4) if n else None,
        **out,
        "per_language": {k: round(sum(v) / len(v), 4) for k, v in per_language.items()},
        "judge_retries": retries,
        "generated_tokens_per_sample": round(judge.get("completion_tokens", 0) / len(rows), 1),
        "prompt_tokens_processed_per_sample": round(
            judge.get("prompt_tokens_processed", 0) / len(rows), 1),
        "seconds_per_sample": round(summary.get("elapsed_s", 0) / len(rows), 1),
        "judge": judge,
    }, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
