"""Agreement of rubric metrics with people, on pairs of answers (prints JSON).

- ragchecker: RAGChecker's human-labelled pairs (en; ../shared/data/dev). Each instance has two
  annotators whose `correctness_label` and `completeness_label` (−2..2) rate model2's response
  against model1's; their sums give the preferred answer per aspect. The pairs used are those
  with a preference on both aspects and two non-empty responses, the `--n` with the fewest
  characters (question, reference and both responses): the same pairs for every score.
  Rubrics `completeness` and `correctness` (scripts/bench/rubric_agreement.toml) against their
  own preference, beside the built-in metrics named with `--metrics` (answer_relevance,
  answer_correctness) against both.
- halluqa: HalluQA dev (zh): `Best Answer1` against `Wrong_Answer1`, judged against `Source`
  (as context); the rubrics `source_correct` (answers correctly by the source) and
  `source_consistent` (says nothing against or beyond the source), zh criteria; people prefer
  the best answer.

Per score: pairwise agreement (wins + ½ ties) / pairs, a pair without both scores a loss, with a
percentile bootstrap 95 % interval (localeval.meta_eval.stats, 2,000 resamples, seed 0), and the
ties. Each rubric's score (probability-weighted level) beside its `.greedy` (greedy level), and a
length-only baseline (the longer answer wins) on the same pairs.

    python scripts/bench/rubric_agreement.py --set ragchecker --n 40 --out runs/rubric-ragchecker
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # scripts.provenance.convert

import localeval
from localeval.meta_eval.stats import bootstrap_ci, mean, pair_outcome
from localeval.names import current_scores
from scripts.provenance.convert import dev_rows

RUBRICS = Path(__file__).with_suffix(".toml")
ASPECTS = {"ragchecker": {"completeness": "completeness", "correctness": "correctness"},
           "halluqa": {"source_correct": "best", "source_consistent": "best"}}
"""Per set: rubric → the human preference it is measured against."""


def ragchecker_pairs(n: int) -> list[dict[str, Any]]:
    by_instance: dict[int, list[dict[str, Any]]] = {}
    for r in dev_rows("ragchecker"):
        by_instance.setdefault(int(r["instance_id"]), []).append(r)
    pairs = []
    for iid, group in sorted(by_instance.items()):
        first = group[0]
        corr = sum(int(r["correctness_label"]) for r in group)
        comp = sum(int(r["completeness_label"]) for r in group)
        if corr == 0 or comp == 0 or not all(
                first[m]["response"].strip() for m in ("model1", "model2")):
            continue  # no preference on an aspect, or an empty response (no metric scores it)
        base = {"question": first["query"], "ground_truth": first["gt_answer"]}
        a = {**base, "answer": first["model1"]["response"]}
        b = {**base, "answer": first["model2"]["response"]}
        size = sum(len(t) for t in (first["query"], first["gt_answer"], a["answer"], b["answer"]))
        pairs.append({"pair_id": f"ragchecker-{iid}", "a": a, "b": b, "chars": size,
                      "preferred": {"correctness": "b" if corr > 0 else "a",
                                    "completeness": "b" if comp > 0 else "a"}})
    pairs.sort(key=lambda p: (p["chars"], p["pair_id"]))
    return pairs[:n]


def halluqa_pairs(n: int) -> list[dict[str, Any]]:
    pairs = []
    for r in dev_rows("halluqa")[:n]:
        base = {"question": r["Question"], "contexts": [r["Source"]]}
        pairs.append({"pair_id": r["id"], "a": {**base, "answer": r["Best Answer1"]},
                      "b": {**base, "answer": r["Wrong_Answer1"]},
                      "preferred": {"best": "a"}})
    return pairs


def agreement(pairs: list[dict[str, Any]], aspect: str, score: dict[str, float | None],
              ) -> dict[str, Any]:
    """Pairwise agreement of one score with people's preference on one aspect."""
    outcomes, ties = [], 0
    for p in pairs:
        good = p["preferred"][aspect]
        bad = "b" if good == "a" else "a"
        x, y = score.get(f"{p['pair_id']}/{good}"), score.get(f"{p['pair_id']}/{bad}")
        outcomes.append(pair_outcome(x, y))
        ties += x is not None and y is not None and abs(x - y) <= 1e-9
    ci = bootstrap_ci(mean, outcomes)
    return {"agreement": round(mean(outcomes) or 0.0, 4),
            "ci95": [round(c, 4) for c in ci] if ci else None, "pairs": len(outcomes),
            "ties": ties, "unscored": sum(
                score.get(f"{p['pair_id']}/{s}") is None for p in pairs for s in "ab")}


def stored_scores(path: Path) -> dict[str, dict[str, float | None]]:
    """Score key → row id → score, from a run folder's results.jsonl."""
    out: dict[str, dict[str, float | None]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            for key, value in current_scores(record["scores"]).items():
                out.setdefault(key, {})[record["id"]] = value
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--set", choices=sorted(ASPECTS), required=True)
    parser.add_argument("--n", type=int, default=40, help="pairs (the shortest, ragchecker)")
    parser.add_argument("--metrics", default="", help="built-in metrics to run beside, e.g. "
                                                      "answer_relevance,answer_correctness")
    parser.add_argument("--out", type=Path, required=True, help="the run folder (resumable)")
    parser.add_argument("--profile", default="small")
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--explain", action="store_true", help="ask reasons (default: none)")
    parser.add_argument("--from-results", action="store_true",
                        help="judge nothing: the figures of the pairs --out holds both rows of "
                             "(a run stopped early)")
    args = parser.parse_args()
    pairs = ragchecker_pairs(args.n) if args.set == "ragchecker" else halluqa_pairs(args.n)
    rubrics = list(ASPECTS[args.set])
    built_in = [m for m in args.metrics.split(",") if m]
    rows = [{**p[s], "id": f"{p['pair_id']}/{s}"} for p in pairs for s in "ab"]
    if args.from_results:
        scores = stored_scores(args.out / "results.jsonl")
        done = {i for per in scores.values() for i in per}
        pairs = [p for p in pairs if {f"{p['pair_id']}/a", f"{p['pair_id']}/b"} <= done]
        calls = None
    else:
        resume = (args.out / "results.jsonl").is_file()
        results = localeval.evaluate(
            rows, metrics=rubrics + built_in, metrics_files=[RUBRICS], out=args.out,
            resume=resume, profile=args.profile, cache=args.cache, explain=args.explain,
            progress=False)
        scores = {k: results.scores(k) for k in results.metrics}
        calls = results.judge_calls
    out: dict[str, Any] = {"set": args.set, "pairs": [p["pair_id"] for p in pairs],
                           "profile": args.profile, "explain": args.explain,
                           "judge_calls": calls, "figures": {}}
    length = {r["id"]: float(len(r["answer"])) for r in rows}
    for aspect in sorted({a for p in pairs for a in p["preferred"]}):
        figures: dict[str, Any] = {"length (longer wins)": agreement(pairs, aspect, length)}
        for key in scores:
            if key.split(".")[0] in rubrics and ASPECTS[args.set][key.split(".")[0]] != aspect:
                continue
            figures[key] = agreement(pairs, aspect, scores[key])
        out["figures"][aspect] = figures
    text = json.dumps(out, indent=1, ensure_ascii=False)
    (args.out / "agreement.json").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
