"""Fit τ (the P(supported) a claim needs) on meta-eval folders, and print the curve as JSON.

Each folder is a `localeval meta-eval` run (faithfulness) of dev pairs. The score of every
answer is recomputed from its per-claim entries for each τ of a grid (a quote counts 1, a claim
overruled by a mechanical check 0, any other claim 1 when P(supported) ≥ τ), then pairwise
accuracy ((wins + ½ ties) / pairs, unscored = loss) and ties per folder. τ is chosen per language
as the grid value with the best mean pairwise over that language's folders (ties broken towards
the middle of the grid), then the weighted score's pairwise beside it. Fit folders only: the
folders whose figures are reported are not passed here.

    python scripts/provenance/fit_threshold.py runs/dev/halueval-fit runs/dev/halluqa-fit ...
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

from localeval.names import WEIGHTED, current_scores

GRID = [round(0.05 * i, 2) for i in range(2, 20)]


def claim_scores(entries: list[dict], tau: float) -> list[int]:
    """Each claim's verdict at τ (a quote settled without the judge, in runs made before quotes
    were judged, stays supported)."""
    out = []
    for e in entries:
        p = e.get("p_claim", e.get("p_supported"))
        if e.get("rule") == "quote":
            out.append(1)
        elif e.get("rule") == "check" or e.get("novel_details"):
            out.append(0)
        elif p is None:
            out.append(int(e["verdict"]))
        else:
            out.append(int(p >= tau))
    return out


def load(folder: Path, metric: str) -> tuple[dict[str, dict], str]:
    rows = {}
    language = "en"
    for line in (folder / "results.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        rows[r["id"]] = r
        language = r.get("language", language)
    return rows, language


def score(row: dict | None, metric: str, tau: float | None) -> float | None:
    if row is None:
        return None
    details = row.get("details", {}).get(metric, row.get("details", {}))
    entries = details.get("statements") or []
    if tau is None:
        return current_scores(row.get("scores", {})).get(metric + WEIGHTED)
    if not entries:
        return None
    votes = claim_scores(entries, tau)
    return sum(votes) / len(votes)


def rules_fired(rows: dict[str, dict], metric: str) -> dict[str, int]:
    """How often each mechanical rule fired over the folder's answers, and the claims judged."""
    out: Counter[str] = Counter()
    for row in rows.values():
        details = row.get("details", {}).get(metric, {})
        out.update(details.get("rules", {}))
        out["claims"] += len(details.get("statements") or [])
    return dict(sorted(out.items()))


def pairwise(rows: dict[str, dict], metric: str, tau: float | None) -> dict[str, float]:
    pairs = sorted({i.rsplit("/", 1)[0] for i in rows})
    wins = ties = 0
    for p in pairs:
        a = score(rows.get(p + "/a"), metric, tau)
        b = score(rows.get(p + "/b"), metric, tau)
        if a is None or b is None:
            continue
        wins += a > b + 1e-9
        ties += abs(a - b) <= 1e-9
    n = len(pairs)
    return {"pairs": n, "pairwise": round((wins + ties / 2) / n, 4) if n else 0.0,
            "ties": ties}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--metric", default="faithfulness")
    args = parser.parse_args()
    by_lang: dict[str, list[tuple[str, dict]]] = defaultdict(list)
    for folder in args.folders:
        rows, language = load(folder, args.metric)
        by_lang[language].append((folder.name, rows))
    out: dict[str, dict] = {}
    for language, sets in sorted(by_lang.items()):
        curve = []
        for tau in GRID:
            per = {name: pairwise(rows, args.metric, tau) for name, rows in sets}
            mean = sum(p["pairwise"] for p in per.values()) / len(per)
            curve.append({"tau": tau, "mean_pairwise": round(mean, 4), "sets": per})
        best = max(curve, key=lambda c: (c["mean_pairwise"], -abs(c["tau"] - 0.5)))
        soft = {name: pairwise(rows, args.metric, None) for name, rows in sets}
        rules = {name: rules_fired(rows, args.metric) for name, rows in sets}
        out[language] = {"chosen_tau": best["tau"], "at_chosen": best["sets"],
                         "weighted": soft, "rules": rules, "curve": curve}
    json.dump(out, sys.stdout, ensure_ascii=False, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
