"""What a conversation costs against the same turns scored as independent rows, from
`run --estimate --json` (the judge's tokenizer only: no weights loaded, nothing judged).

    python scripts/bench/conversation_cost.py --dev research/conversations/dev.jsonl

Writes each set of the dev file (and all of it) twice under `--out`: the conversations as they
are, and their assistant turns as single-turn rows (`conversation_agreement.independent_turns`:
the user message as asked, the answer, the turn's contexts and ground_truth, no history); runs
`python -m localeval run FILE --estimate --json --no-calibrate --no-cache` on each (the default
metrics unless `--metrics`); prints JSON: per group and way the estimate's total requests, prompt
tokens, prompt tokens read after prefix reuse and generated tokens, per conversation and in all,
with the requests per judge step, and the ratio conversation / independent.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # scripts.* beside localeval

from scripts.bench.conversation_agreement import independent_turns, rows

FIGURES = ("requests", "prompt_tokens", "prompt_tokens_processed", "generated_tokens")


def estimate(path: Path, extra: list[str]) -> dict[str, Any]:
    """`run --estimate --json` of one file, as a user would run it."""
    done = subprocess.run(
        [sys.executable, "-m", "localeval", "run", str(path), "--estimate", "--json",
         "--no-calibrate", "--no-cache", *extra], capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(f"{path}: {done.stderr.strip()}")
    return json.loads(done.stdout)


def cost(conversations: list[dict[str, Any]], out: Path, name: str,
         extra: list[str]) -> dict[str, Any]:
    """Both ways of one group of conversations."""
    files = {"conversation": [{"id": r["id"], "turns": r["turns"]} for r in conversations],
             "independent": [row for r in conversations for row in independent_turns(r)]}
    n = len(conversations)
    result: dict[str, Any] = {"conversations": n, "independent_rows": len(files["independent"])}
    for way, items in files.items():
        path = out / f"{name}-{way}.jsonl"
        path.write_text("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in items),
                        encoding="utf-8")
        e = estimate(path, extra)
        total = e["total"]
        result[way] = {"metrics": e["metrics"], "count": total.get("count"),
                       "total": {k: total.get(k) for k in FIGURES},
                       "per_conversation": {k: total[k] / n for k in FIGURES
                                            if total.get(k) is not None},
                       "requests_by_step": {s: v["requests"] for s, v in e["steps"].items()}}
    c, i = result["conversation"]["total"], result["independent"]["total"]
    result["ratio"] = {k: c[k] / i[k] for k in FIGURES if c.get(k) and i.get(k)}
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dev", type=Path, default=Path("research/conversations/dev.jsonl"))
    parser.add_argument("--out", type=Path, default=Path("runs/conv-cost"))
    parser.add_argument("--metrics", help="as run's --metrics (default: run's default)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    extra = ["--metrics", args.metrics] if args.metrics else []
    dev = rows(args.dev)
    groups = {"all": dev}
    for r in dev:
        groups.setdefault(f"{r['set']}-{r['language']}", []).append(r)
    print(json.dumps({name: cost(g, args.out, name, extra) for name, g in groups.items()},
                     ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
