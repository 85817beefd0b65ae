"""Fit a judge step's own τ (FITTED_STEP: the P(yes) a verdict needs) on the frame bench's fit
pairs, and print the curve as JSON.

Each folder holds `bench_builtin_frame.py --set METRIC_LANG_fit` records (context_precision or
context_recall): per pair, the row's own passage (`good`) and a BM25 near miss (`bad`), one
context each. The items are the verdicts the step decides: for context_precision the context
(its record's `weighted` is its P(useful)), for context_recall each ground-truth claim (the
record's `claim_p`: every claim of the own passage's side is attributable, none of the near
miss's). A P of 0 is a verdict a mechanical check overruled. For each τ of the grid the greedy
verdicts P ≥ τ are counted against those roles; τ is the grid value with the best balanced
accuracy (the mean of the own side's items called yes and the near side's called no), ties
broken towards the middle of the tied run. Fit records only: the report half's records are not
passed here.

    python scripts/provenance/fit_step_threshold.py /tmp/cpfit/en /tmp/cpfit/zh
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

GRID = [round(0.05 * i, 2) for i in range(1, 20)]


def load(folder: Path) -> tuple[str, list[float], list[float]]:
    """The set's language and the P(yes) of the items of its own passages and of its near
    misses: a record's claims (`claim_p`) where it has them, else its `weighted`."""
    own: list[float] = []
    near: list[float] = []
    language = "en"
    for line in (folder / "records.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        if r.get("variant") != "default" or r.get("weighted") is None:
            continue
        language = "zh" if "_zh" in r["set"] else "en"
        items = r.get("claim_p")
        items = [p for p in items if p is not None] if items is not None else [r["weighted"]]
        (own if r["side"] == "good" else near).extend(float(p) for p in items)
    return language, own, near


def curve(own: list[float], near: list[float]) -> list[dict[str, float]]:
    out = []
    for tau in GRID:
        hit = sum(p >= tau for p in own) / len(own)
        reject = sum(p < tau for p in near) / len(near)
        out.append({"tau": tau, "own_useful": round(hit, 4), "near_not_useful": round(reject, 4),
                    "balanced_accuracy": round((hit + reject) / 2, 4)})
    return out


def choose(points: list[dict[str, float]]) -> float:
    """The middle of the longest run of grid values with the best balanced accuracy."""
    best = max(p["balanced_accuracy"] for p in points)
    runs: list[list[float]] = []
    for p in points:
        if p["balanced_accuracy"] == best:
            if runs and runs[-1][-1] == round(p["tau"] - 0.05, 2):
                runs[-1].append(p["tau"])
            else:
                runs.append([p["tau"]])
    longest = max(runs, key=len)
    return longest[(len(longest) - 1) // 2]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    args = parser.parse_args(argv)
    out = {}
    for folder in args.folders:
        language, own, near = load(folder)
        if not own or not near:
            print(f"{folder}: no default-variant records of both sides", file=sys.stderr)
            return 2
        points = curve(own, near)
        out[language] = {"folder": str(folder), "own": len(own), "near": len(near),
                         "tau": choose(points), "curve": points}
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
