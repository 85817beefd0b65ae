"""The dev pairs the verifier is chosen and reported on (never trained on), one meta-eval file.

Per set the first pairs of ../shared/data/dev (scripts/provenance/convert.py), the hand-written
swaps (scripts/provenance/data/swaps.jsonl), the length-fair HaluEval QA pairs (the hallucinated
answer not longer than the right one, from all 200 dev rows) and a sample of the injection
pairs. Each pair's `meta.set` names its set.

    python scripts/verifier/dev_pairs.py --out runs/verifier/dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # scripts.provenance.convert

from scripts.provenance.convert import CONVERTERS, default_src

SWAPS = Path(__file__).resolve().parents[1] / "provenance" / "data" / "swaps.jsonl"
SIZES = {"halueval": 30, "halueval_summarization": 12, "halluqa": 30, "uhgeval": 20}
"""Pairs per set (the first of each dev file): what two CPU cores judge in about 15 minutes."""
INJECTIONS = 8


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    pairs: list[dict] = []

    def add(name: str, items: list[dict]) -> None:
        for p in items:
            pairs.append({**p, "pair_id": f"{name}:{p['pair_id']}",
                          "meta": {**(p.get("meta") or {}), "set": name}})

    for name, n in SIZES.items():
        add(name, list(CONVERTERS[name](default_src()))[:n])
    fair = [p for p in CONVERTERS["halueval"](default_src())
            if len(p["b"]["answer"]) <= len(p["a"]["answer"])]
    add("length_fair", fair)
    add("swaps", [json.loads(x) for x in SWAPS.read_text(encoding="utf-8").splitlines() if x])
    adversarial = list(CONVERTERS["adversarial"](default_src()))
    add("injection", random.Random(0).sample(adversarial, min(16, len(adversarial)))[:INJECTIONS])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("w", encoding="utf-8") as f:
        for p in pairs:
            f.write(json.dumps(p, ensure_ascii=False) + "\n")
    counts: dict[str, int] = {}
    for p in pairs:
        counts[p["meta"]["set"]] = counts.get(p["meta"]["set"], 0) + 1
    print(json.dumps(counts))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
