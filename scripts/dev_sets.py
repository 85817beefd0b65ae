"""Write the faithfulness dev pairs as meta-eval files, split into a fit half and a report half.

For each of halueval, halueval_summarization, halluqa and uhgeval: `<set>-fit.jsonl` holds pairs
[0, N) (τ is fitted on these: scripts/fit_threshold.py) and `<set>-report.jsonl` pairs [N, 2N)
(the figures reported). `long-report.jsonl` is the long dev set (scripts/build_long_dev.py, its
rows paired), `adversarial-report.jsonl` the injection pairs and `swaps-report.jsonl` the swaps
(scripts/data/swaps.jsonl); none is fitted on.

    python scripts/dev_sets.py --out runs/dev --n 20
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

from localeval.meta_eval.convert import CONVERTERS, default_src

SETS = ("halueval", "halueval_summarization", "halluqa", "uhgeval")
SWAPS = Path(__file__).with_name("data") / "swaps.jsonl"
"""16 hand-written pairs (8 en, 8 zh): a comparison turned round, or one of two things the
context names put in place of the other (roles, places, years, people); never fitted on."""


def write(path: Path, pairs: list[dict]) -> None:
    path.write_text("".join(json.dumps(p, ensure_ascii=False) + "\n" for p in pairs),
                    encoding="utf-8")


def long_pairs(out: Path, n: int) -> list[dict]:
    rows_file = out / "long_rows.jsonl"
    subprocess.run([sys.executable, str(Path(__file__).with_name("build_long_dev.py")),
                    "--pairs", str(n), "--out", str(rows_file)], check=True,
                   stdout=subprocess.DEVNULL)
    rows = [json.loads(line) for line in rows_file.read_text(encoding="utf-8").splitlines()]
    twins: dict[str, dict[str, dict]] = {}
    for r in rows:
        side = "a" if r.pop("preferred") else "b"
        pid = r.pop("pair")
        r.pop("id", None)
        twins.setdefault(pid, {})[side] = r
    return [{"pair_id": pid, "preferred": "a", **t} for pid, t in twins.items()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--n", type=int, default=20, help="pairs per half (default 20)")
    parser.add_argument("--long", type=int, default=3, help="long pairs per language")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    counts = {}
    for name in SETS:
        pairs = list(CONVERTERS[name](default_src()))
        write(args.out / f"{name}-fit.jsonl", pairs[: args.n])
        write(args.out / f"{name}-report.jsonl", pairs[args.n: 2 * args.n])
        counts[name] = [len(pairs[: args.n]), len(pairs[args.n: 2 * args.n])]
    long = long_pairs(args.out, args.long)
    write(args.out / "long-report.jsonl", long)
    adversarial = list(CONVERTERS["adversarial"](default_src()))
    write(args.out / "adversarial-report.jsonl", adversarial)
    swaps = [json.loads(line) for line in SWAPS.read_text(encoding="utf-8").splitlines()]
    write(args.out / "swaps-report.jsonl", swaps)
    counts |= {"long": [0, len(long)], "adversarial": [0, len(adversarial)],
               "swaps": [0, len(swaps)]}
    print(json.dumps({"fit_report_pairs": counts}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
