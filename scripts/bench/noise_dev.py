"""How the diagnosis classes the answers of the noise dev set (scripts/provenance/data/
noise_dev.jsonl: built by build_noise_dev.py before anything was tuned), from a run folder of it
(prints JSON).

Per language and per kind of answer (`expect`: supported, noise_relevant, noise_irrelevant,
hallucination): rows whose answer claims are all of the expected class, the mean share of
claims of that class, and the class the claims got instead.

    python -m localeval run scripts/provenance/data/noise_dev.jsonl --metrics diagnosis \\
        --profile small --out runs/noise-dev
    python scripts/bench/noise_dev.py runs/noise-dev
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

DEV = Path(__file__).resolve().parents[1] / "provenance" / "data" / "noise_dev.jsonl"


def figures(results: Path, dev: Path = DEV) -> dict[str, Any]:
    rows = {r["id"]: r for r in map(json.loads, dev.read_text(encoding="utf-8").splitlines())}
    groups: dict[tuple[str, str], list[list[str]]] = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        rec = json.loads(line)
        row = rows.get(rec["id"])
        details = rec["details"].get("noise_sensitivity") or rec["details"].get("hallucination")
        if row is None or not details or "answer_claims" not in details:
            continue
        classes = [c["class"] for c in details["answer_claims"]]
        groups.setdefault((row["language"], row["expect"]), []).append(classes)
    out: dict[str, Any] = {}
    for (lang, expect), got in sorted(groups.items()):
        shares = [c.count(expect) / len(c) for c in got if c]
        out[f"{lang}/{expect}"] = {
            "rows": len(got),
            "all_expected": sum(bool(c) and all(x == expect for x in c) for c in got),
            "mean_share": round(sum(shares) / len(shares), 3) if shares else None,
            "instead": dict(Counter(x for c in got for x in c if x != expect).most_common()),
        }
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", type=Path, help="a run folder of the noise dev set")
    parser.add_argument("--dev", type=Path, default=DEV)
    args = parser.parse_args()
    results = args.run / "results.jsonl"
    if not results.is_file():
        print(f"noise_dev: error: {results} not found; run the dev set first (see --help)",
              file=sys.stderr)
        return 2
    print(json.dumps(figures(results, args.dev), ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
