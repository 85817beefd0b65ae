"""Agreement of localeval's judge metrics with people, on the dev pairs of ../shared/data/dev.

Each pair holds a better and a worse answer (as people labelled them); a metric agrees when it
scores the better one higher. Pairwise accuracy = (wins + ½ ties) / pairs; a pair where either
answer got no score (unscored or an error) counts as a loss, never skipped.

- halueval   faithfulness: right_answer vs hallucinated_answer, context = knowledge.
- uhgeval    faithfulness: realContinuation vs hallucinatedContinuation; the context is the
             article, newsBeginning + newsRemainder (data README); the question asks to continue
             the news, "请续写这篇新闻。" (with the headline in the question, the 1.5B judge
             copied headline claims into the statements of the continuation).
- ragchecker answer_correctness of model1 vs model2 responses against gt_answer; the human
             preference is the sign of the two annotators' summed correctness labels (model2 vs
             model1); instances where they sum to 0 carry no preference and are left out (counted).

Heavy (a real judge): run it as
    flock /tmp/localeval-cpu.lock .venv/bin/python scripts/agreement.py --n 40 \
        --cache runs/agreement.sqlite
Prints one JSON object. The answer cache makes a rerun with unchanged prompts free.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DATA = Path("../shared/data/dev")  # relative to the repository root
SETS = ("halueval", "uhgeval", "ragchecker")
METRIC = {"halueval": "faithfulness", "uhgeval": "faithfulness", "ragchecker": "answer_correctness"}


def halueval_pairs(data: Path) -> Iterator[tuple[str, dict, dict, int]]:
    """(id, row A, row B, human sign of B vs A): A is the right answer, so B loses (-1)."""
    for line in (data / "halueval_qa_dev.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        base = {"question": r["question"], "contexts": [r["knowledge"]]}
        yield (r["id"], {**base, "id": r["id"] + "/right", "answer": r["right_answer"]},
               {**base, "id": r["id"] + "/hallucinated", "answer": r["hallucinated_answer"]}, -1)


def uhgeval_pairs(data: Path) -> Iterator[tuple[str, dict, dict, int]]:
    for line in (data / "uhgeval_dev.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        article = (r["newsBeginning"] + r["newsRemainder"]).strip()
        base = {"question": "请续写这篇新闻。", "contexts": [article]}
        yield (r["id"], {**base, "id": r["id"] + "/real", "answer": r["realContinuation"].strip()},
               {**base, "id": r["id"] + "/hallucinated",
                "answer": r["hallucinatedContinuation"].strip()}, -1)


def ragchecker_pairs(data: Path, skipped: list[str]) -> Iterator[tuple[str, dict, dict, int]]:
    rows = json.loads((data / "ragchecker_human_labeled.json").read_text(encoding="utf-8"))
    by_instance: dict[int, list[dict]] = {}
    for r in rows:
        by_instance.setdefault(r["instance_id"], []).append(r)
    for iid, group in sorted(by_instance.items()):
        first = group[0]
        label = sum(int(r["correctness_label"]) for r in group)
        pid = f"ragchecker-{iid}"
        if label == 0:
            skipped.append(pid)
            continue
        base = {"question": first["query"], "ground_truth": first["gt_answer"]}
        yield (pid, {**base, "id": pid + "/model1", "answer": first["model1"]["response"]},
               {**base, "id": pid + "/model2", "answer": first["model2"]["response"]},
               1 if label > 0 else -1)


def outcome(score_a: float | None, score_b: float | None, human: int) -> float:
    """1 if the metric prefers the answer people preferred, ½ on a tie, 0 otherwise or when
    either answer has no score."""
    if score_a is None or score_b is None:
        return 0.0
    diff = score_b - score_a
    if abs(diff) < 1e-9:
        return 0.5
    return 1.0 if (diff > 0) == (human > 0) else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default=",".join(SETS),
                        help="comma-separated: " + ", ".join(SETS))
    parser.add_argument("--n", type=int, default=40, help="pairs per set (default 40)")
    parser.add_argument("--offset", type=int, default=0, help="skip this many pairs of each set")
    parser.add_argument("--profile", default="small", choices=["tiny", "small", "standard"])
    parser.add_argument("--judge-model", type=Path, help="GGUF file instead of the profile's judge")
    parser.add_argument("--cache", type=Path, default=Path("runs/agreement-cache.sqlite"))
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--no-explain", action="store_true", help="verdicts without reasons")
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--style", choices=["evidence", "reason", "bare", "focused"],
                        help="what the judge writes before each verdict (default: evidence, or "
                             "bare with --no-explain)")
    parser.add_argument("--pairs", action="store_true", help="include every pair's scores")
    parser.add_argument("--budget-s", type=float, default=None,
                        help="stop starting new pairs of a set after this many seconds (the JSON "
                             "then says how many pairs were scored); the cache keeps them")
    args = parser.parse_args()

    from localeval.config import Settings
    from localeval.dataset import to_sample
    from localeval.metrics import resolve
    from localeval.runner import build_backends, evaluate_sample

    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    unknown = [s for s in sets if s not in SETS]
    if unknown:
        parser.error(f"unknown set(s) {unknown}; choose from {SETS}")
    metric_names = sorted({METRIC[s] for s in sets})
    settings = Settings(metrics=metric_names, profile=args.profile, judge_model=args.judge_model,
                        cache=args.cache, n_ctx=args.n_ctx, explain=not args.no_explain)
    metrics = resolve(metric_names)
    if args.style:
        from localeval.metrics import chunking

        chunking.STYLE = args.style
    started = time.perf_counter()
    backends = build_backends(settings, metrics)
    load_s = time.perf_counter() - started
    report: dict[str, Any] = {"judge": backends.info.get("judge"), "cache": str(args.cache),
                              "explain": settings.explain, "n_ctx": settings.n_ctx,
                              "model_load_s": round(load_s, 1), "sets": {}}
    async def score_pairs(chosen: list, metric: list, key: str, name: str) -> list[dict]:
        results = []
        t0 = time.perf_counter()
        for pid, row_a, row_b, human in chosen:
            if args.budget_s is not None and time.perf_counter() - t0 > args.budget_s:
                break
            a, b = to_sample(row_a, 1), to_sample(row_b, 2)
            rec_a, rec_b = await asyncio.gather(evaluate_sample(a, metric, settings, backends),
                                                evaluate_sample(b, metric, settings, backends))
            sa, sb = rec_a.scores.get(key), rec_b.scores.get(key)
            retries = sum(int(d.get("judge_retries", 0)) for rec in (rec_a, rec_b)
                          for d in rec.details.values() if isinstance(d, dict))
            results.append({"id": pid, "human": human, "a": sa, "b": sb, "retries": retries,
                            "outcome": outcome(sa, sb, human),
                            "errors": {**rec_a.errors, **rec_b.errors} or None})
            print(f"{name} {pid}: a={sa} b={sb} human={human:+d} -> {results[-1]['outcome']}",
                  file=sys.stderr, flush=True)
        return results

    async def run_all() -> None:
        for name in sets:
            skipped: list[str] = []
            if name == "halueval":
                source = halueval_pairs(args.data)
            elif name == "uhgeval":
                source = uhgeval_pairs(args.data)
            else:
                source = ragchecker_pairs(args.data, skipped)
            chosen = [p for i, p in enumerate(source) if args.offset <= i < args.offset + args.n]
            metric = [m for m in metrics if m.name == METRIC[name]]
            stats = backends.judge.stats if backends.judge else None
            calls0, cached0 = (stats.calls, stats.cached) if stats else (0, 0)
            gen0 = stats.completion_tokens if stats else 0
            t0 = time.perf_counter()
            results = await score_pairs(chosen, metric, METRIC[name], name)
            elapsed = time.perf_counter() - t0
            n = len(results)
            entry: dict[str, Any] = {
                "metric": METRIC[name],
                "pairs": n,
                "offset": args.offset,
                "pairwise_accuracy": (round(sum(r["outcome"] for r in results) / n, 4)
                                      if n else None),
                "wins": sum(r["outcome"] == 1.0 for r in results),
                "ties": sum(r["outcome"] == 0.5 for r in results),
                "losses": sum(r["outcome"] == 0.0 for r in results),
                "unscored_pairs": sum(r["a"] is None or r["b"] is None for r in results),
                "seconds": round(elapsed, 1),
                "seconds_per_pair": round(elapsed / n, 1) if n else None,
                "judge_calls": (stats.calls - calls0) if stats else 0,
                "cached_calls": (stats.cached - cached0) if stats else 0,
                "generated_tokens_per_sample": (round((stats.completion_tokens - gen0) / (2 * n),
                                                      1) if stats and n else None),
                "seconds_per_sample": round(elapsed / (2 * n), 1) if n else None,
                "judge_retries": sum(r["retries"] for r in results),
            }
            if n < len(chosen):
                entry["stopped_by_budget"] = f"{n} of {len(chosen)} pairs scored in --budget-s"
            if name == "ragchecker":
                entry["left_out_no_human_preference"] = len(skipped)
            if args.pairs:
                entry["per_pair"] = results
            report["sets"][name] = entry

    try:
        asyncio.run(run_all())
    finally:
        backends.close()
    if backends.judge:
        s = backends.judge.stats
        report["judge_totals"] = {"calls": s.calls, "cached": s.cached, "failures": s.failures,
                                  "prompt_tokens": s.prompt_tokens,
                                  "prompt_tokens_processed": s.prompt_tokens_processed,
                                  "completion_tokens": s.completion_tokens}
    report["elapsed_s"] = round(time.perf_counter() - started, 1)
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
