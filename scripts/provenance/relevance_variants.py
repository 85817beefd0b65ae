"""Pairwise accuracy and Cohen's κ of every candidate formula of answer_relevance and
context_relevance, recomputed from the details of a meta-eval run on pairs (no judge call).

    python scripts/provenance/relevance_variants.py runs/rel/ar-partial-en runs/rel/cr-padded-zh ...

Pairwise = (wins + ½ ties) / pairs, a pair with an unscored side counted as a loss (as
meta-eval); κ treats each side as a labelled row (preferred 1, other 0) and a score ≥ 0.5 as
the judge saying 1. Prints one JSON object: folder → variant → {pairwise, ties, kappa}.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localeval.names import WEIGHTED, current_scores

Row = dict[str, Any]


def _prod(*xs: float | None) -> float | None:
    out = 1.0
    for x in xs:
        if x is None:
            return None
        out *= x
    return out


def _mean(items: list[dict[str, Any]], key: str) -> float | None:
    return sum(i[key] for i in items) / len(items) if items else None


def _ar(key: str) -> Callable[[Row], float | None]:
    def get(r: Row) -> float | None:
        d = r["details"].get("answer_relevance") or {}
        gen = d.get("generated_questions") or []
        clear = _mean(gen, "clear")
        parts, sents = d.get("parts") or [], d.get("sentences") or []
        sim = d.get("similarity")
        comp, focus = _mean(parts, "answered"), _mean(sents, "asked")
        soft_c, soft_f = _mean(parts, "p_answered"), _mean(sents, "p_asked")
        related = (sum(bool(g["clear"] and g["rescaled"] > 0) for g in gen) / len(gen)
                   if gen else None)
        best = max((g["clear"] * g["rescaled"] for g in gen), default=None)
        return {
            "old (raw cosine × clear)": d.get("raw"),
            "similarity (rescaled)": sim,
            "related × P completeness (the score)": _prod(related, soft_c),
            "related × P completeness × P focus": _prod(related, soft_c, soft_f),
            "best question's similarity × P completeness": _prod(best, soft_c),
            "P completeness": soft_c,
            "similarity × P completeness": _prod(sim, soft_c),
            "similarity × completeness × focus (½-cut shares)": _prod(sim, comp, focus),
            "similarity × P completeness × P focus (round 9's score)": _prod(sim, soft_c, soft_f),
            "similarity × completeness": _prod(sim, comp),
            "similarity × focus": _prod(sim, focus),
            "clear share × completeness × focus": _prod(clear, comp, focus),
            "clear share × P completeness × P focus": _prod(clear, soft_c, soft_f),
            "completeness": comp,
            "focus": focus,
        }[key]
    return get


AR_VARIANTS = ["old (raw cosine × clear)", "similarity (rescaled)",
               "related × P completeness (the score)", "related × P completeness × P focus",
               "best question's similarity × P completeness", "P completeness",
               "similarity × P completeness",
               "similarity × completeness × focus (½-cut shares)",
               "similarity × P completeness × P focus (round 9's score)",
               "similarity × completeness",
               "similarity × focus", "clear share × completeness × focus",
               "clear share × P completeness × P focus", "completeness", "focus"]
CR_KEYS = ["context_relevance.answer_supported_precision",
           "context_relevance.answer_supported_precision" + WEIGHTED,
           "context_relevance.context_supported_precision",
           "context_relevance.context_supported_precision" + WEIGHTED,
           "context_relevance.rank_weighted"]


def figures(rows: dict[str, Row], get: Callable[[Row], float | None]) -> dict[str, Any]:
    pairs = sorted({i.rsplit("/", 1)[0] for i in rows})
    wins = ties = judged = 0
    said: list[int] = []
    truth: list[int] = []
    for pid in pairs:
        a, b = rows.get(f"{pid}/a"), rows.get(f"{pid}/b")
        if a is None or b is None:
            continue
        judged += 1
        sa, sb = get(a), get(b)
        if sa is None or sb is None:
            continue
        if abs(sa - sb) <= 1e-9:
            ties += 1
        elif sa > sb:
            wins += 1
        said += [int(sa >= 0.5), int(sb >= 0.5)]
        truth += [1, 0]
    return {"pairwise": round((wins + ties / 2) / judged, 3) if judged else None,
            "ties": ties, "pairs": judged, "kappa": kappa(said, truth)}


def kappa(said: list[int], truth: list[int]) -> float | None:
    n = len(said)
    if not n:
        return None
    po = sum(s == t for s, t in zip(said, truth, strict=True)) / n
    ps, pt = sum(said) / n, sum(truth) / n
    pe = ps * pt + (1 - ps) * (1 - pt)
    return None if pe == 1 else round((po - pe) / (1 - pe), 3)


def main() -> int:
    out: dict[str, Any] = {}
    for folder in map(Path, sys.argv[1:]):
        rows = {r["id"]: r for r in map(json.loads, (folder / "results.jsonl").read_text(
            encoding="utf-8").splitlines())}
        first = next(iter(rows.values()))
        if "answer_relevance" in first["details"] or "answer_relevance" in first["scores"]:
            variants = {k: _ar(k) for k in AR_VARIANTS}
        else:
            variants = {k: (lambda r, k=k: current_scores(r["scores"]).get(k)) for k in CR_KEYS}
        out[str(folder)] = {k: figures(rows, get) for k, get in variants.items()}
    print(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
