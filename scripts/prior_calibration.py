#!/usr/bin/env python
"""Does the judge's prior explain its "supported"? P(supported) against a content-free context.

A lever measured for issue 17 (contextual calibration, as in "Calibrate before use"): each claim
the judge decided in a `localeval meta-eval` folder (faithfulness, pairs) is asked again with the
context replaced by "N/A". A claim the context supports should gain probability from it; one the
judge believes anyway should not. For each rule — P ≥ τ and P − P_null ≥ δ, or
logit(P) − logit(P_null) ≥ k — the answers are re-scored from the recorded entries (a quote
counts 1, a mechanical check 0) and the pairwise accuracy (ties ½) and ties are printed as JSON,
one line per folder. The content-free requests go through the answer cache.

    python scripts/prior_calibration.py runs/exp/base-halueval-fit runs/exp/base-halluqa-fit \
        [--cache runs/cache.sqlite] [--profile small]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from localeval.config import Settings
from localeval.data.dataset import Sample
from localeval.judge.schemas import checked_verdicts
from localeval.metrics.base import MetricContext, resolve
from localeval.metrics.support.threshold import FITTED, p_yes
from localeval.metrics.support.verdicts import EVIDENCE_CHARS
from localeval.models.backends import build_backends

NULL = "N/A"
DELTAS = (0.0, 0.1, 0.2, 0.3)
LOGITS = (-1.0, 0.0, 0.5, 1.0, 1.5)


def logit(p: float) -> float:
    p = min(max(p, 1e-4), 1 - 1e-4)
    return math.log(p / (1 - p))


async def null_probs(rows: list[dict[str, Any]], ctx_of: Any) -> dict[str, list[float | None]]:
    """Per row, per claim entry: P(supported) with the content-free context (None for quotes)."""
    async def one(row: dict[str, Any]) -> tuple[str, list[float | None]]:
        ctx = ctx_of(row)
        out: list[float | None] = []
        for entry in row["details"]["faithfulness"].get("statements", []):
            if entry.get("rule") == "quote":
                out.append(None)
                continue
            _, probs = await ctx.ask_probs(
                "faithfulness_verdicts",
                checked_verdicts(1, "bare", EVIDENCE_CHARS.get(ctx.language, 160)), ["verdict"],
                style="bare", question=row.get("question") or "", contexts=[NULL],
                statements=[entry["statement"]])
            out.append(p_yes(probs[0]) if probs else None)
        return row["id"], out

    return dict(await asyncio.gather(*(one(r) for r in rows)))


def pairwise(rows: list[dict[str, Any]], nulls: dict[str, list[float | None]],
             keep: Any) -> list[float]:
    """[pairwise accuracy, ties] with a claim supported when keep(P, P_null, τ of its row's
    language)."""
    pairs: dict[str, dict[str, float | None]] = defaultdict(dict)
    for row in rows:
        verdicts = []
        for entry, pn in zip(row["details"]["faithfulness"].get("statements", []),
                             nulls[row["id"]], strict=True):
            if entry.get("rule") in ("quote", "check"):
                verdicts.append(int(entry.get("rule") == "quote"))
            else:
                tau = FITTED.get(row.get("language") or "en", FITTED["en"])
                verdicts.append(int(keep(float(entry["p_supported"]), pn, tau)))
        pair, side = row["id"].rsplit("/", 1)
        pairs[pair][side] = sum(verdicts) / len(verdicts) if verdicts else None
    wins = ties = 0
    for p in pairs.values():
        a, b = p.get("a"), p.get("b")
        if a is not None and b is not None:
            wins += a > b
            ties += a == b
    return [round((wins + ties / 2) / len(pairs), 3), ties]


def curve(rows: list[dict[str, Any]], nulls: dict[str, list[float | None]]
          ) -> dict[str, list[float]]:
    """[pairwise, ties] for τ alone, then each δ and each k of the two rules."""
    out = {"P >= tau": pairwise(rows, nulls, lambda p, n, t: p >= t)}
    for d in DELTAS:
        out[f"P >= tau and P - P_null >= {d}"] = pairwise(
            rows, nulls, lambda p, n, t, d=d: p >= t and (n is None or p - n >= d))
    for k in LOGITS:
        out[f"logit(P) - logit(P_null) >= {k}"] = pairwise(
            rows, nulls, lambda p, n, t, k=k: p >= t if n is None else logit(p) - logit(n) >= k)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--cache", type=Path, default=Path("runs/cache.sqlite"))
    parser.add_argument("--profile", default="small")
    args = parser.parse_args()
    settings = Settings(profile=args.profile, cache=args.cache)
    backends = build_backends(settings, resolve(["faithfulness"]))

    def ctx_of(row: dict[str, Any]) -> MetricContext:
        sample = Sample(id=row["id"], question=row.get("question"), answer="-")
        return MetricContext(sample=sample, language=row.get("language") or "en",
                             settings=settings, judge=backends.judge, embeddings=None)

    async def all_folders() -> None:  # one event loop for the judge engine
        for folder in args.folders:
            rows = [json.loads(line) for line in
                    (folder / "results.jsonl").read_text(encoding="utf-8").splitlines()]
            rows = [r for r in rows if "faithfulness" in r.get("details", {})]
            nulls = await null_probs(rows, ctx_of)
            print(json.dumps({"folder": str(folder), "tau": FITTED,
                              "pairwise_ties": curve(rows, nulls)}), flush=True)

    asyncio.run(all_folders())
    return 0


if __name__ == "__main__":
    sys.exit(main())
