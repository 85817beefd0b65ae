#!/usr/bin/env python
"""Time localeval's retrieval metrics against pytrec-eval-terrier and ranx; print JSON.

Same inputs for all three (Python dicts, as each library takes them): by default 100,000
queries x 100 scored ids, graded qrels. Times cover building each library's structures from
those dicts and scoring; ranx's numba compilation is timed apart (warm-up on a tiny input).

    python scripts/bench/bench_retrieval.py [--queries 100000] [--depth 100] [--no-ranx]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
import warnings
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from localeval.retrieval import evaluate
from localeval.retrieval.trec import rank

CUTOFFS = (5, 10)
# pytrec_eval measure -> localeval name (definitions coincide; see localeval/docs/retrieval.md)
PAIRS = {
    "map": "average_precision",
    "recip_rank": "mrr",
    "ndcg": "ndcg",
    "set_P": "precision",
    "set_recall": "recall",
    **{f"P_{k}": f"precision@{k}" for k in CUTOFFS},
    **{f"recall_{k}": f"recall@{k}" for k in CUTOFFS},
    **{f"ndcg_cut_{k}": f"ndcg@{k}" for k in CUTOFFS},
    **{f"map_cut_{k}": f"average_precision@{k}" for k in CUTOFFS},
    **{f"success_{k}": f"hit_rate@{k}" for k in CUTOFFS},
}
CUTS = ",".join(map(str, CUTOFFS))
TREC_MEASURES = {
    "map",
    "recip_rank",
    "ndcg",
    "set_P",
    "set_recall",
    *(f"{m}.{CUTS}" for m in ("P", "recall", "ndcg_cut", "map_cut", "success")),
}
# ranx metric -> localeval name
RANX_PAIRS = {
    "map": "average_precision",
    "mrr": "mrr",
    "ndcg": "ndcg",
    **{f"precision@{k}": f"precision@{k}" for k in CUTOFFS},
    **{f"recall@{k}": f"recall@{k}" for k in CUTOFFS},
    **{f"ndcg@{k}": f"ndcg@{k}" for k in CUTOFFS},
    **{f"hit_rate@{k}": f"hit_rate@{k}" for k in CUTOFFS},
}


def generate(
    n: int, depth: int, seed: int
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Graded qrels (1-20 judged ids, some retrieved) and runs of ``depth`` scored ids."""
    rng = np.random.default_rng(seed)
    pool = [f"doc{i:07d}" for i in range(1_000_000)]
    docs = rng.integers(0, len(pool), (n, depth)).tolist()
    scores = rng.random((n, depth)).tolist()
    n_judged = rng.integers(1, 21, n).tolist()
    grades = rng.integers(0, 4, (n, 20)).tolist()
    extra = rng.integers(0, len(pool), (n, 20)).tolist()
    from_run = rng.integers(0, depth, (n, 20)).tolist()
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for i in range(n):
        qid = f"q{i}"
        ids = [pool[j] for j in docs[i]]
        run[qid] = dict(zip(ids, scores[i], strict=True))
        m = n_judged[i]
        judged = [
            ids[j] if j % 2 else pool[e] for j, e in zip(from_run[i][:m], extra[i][:m], strict=True)
        ]
        qrels[qid] = dict(zip(judged, grades[i][:m], strict=False))
        qrels[qid][ids[from_run[i][0]]] = max(1, grades[i][0])  # at least one relevant
    return qrels, run


def timed(fn: Any) -> tuple[Any, float]:
    gc.collect()
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--queries", type=int, default=100_000)
    ap.add_argument("--depth", type=int, default=100)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-ranx", action="store_true")
    args = ap.parse_args()

    (qrels, run), gen_s = timed(lambda: generate(args.queries, args.depth, args.seed))
    result: dict[str, Any] = {
        "queries": args.queries,
        "ids_per_query": args.depth,
        "judged_per_query_mean": sum(map(len, qrels.values())) / len(qrels),
        "cutoffs": list(CUTOFFS),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "numpy": np.__version__,
            "pytrec_eval": version("pytrec-eval-terrier"),
            "ranx": version("ranx"),
        },
        "generate_s": round(gen_s, 3),
        "seconds": {},
    }
    sec = result["seconds"]

    kw = {"at": CUTOFFS, "gain": "linear"}
    ours, t = timed(lambda: evaluate(qrels, run, **kw))
    sec["localeval"] = round(t, 3)
    ranked = {q: rank(s) for q, s in run.items()}  # trec_eval's order, as ranked id lists
    ours_lists, t = timed(lambda: evaluate(qrels, ranked, **kw))
    sec["localeval_ranked_lists"] = round(t, 3)
    ranked.clear()

    import pytrec_eval

    evaluator, t_build = timed(lambda: pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES))
    ref, t_eval = timed(lambda: evaluator.evaluate(run))
    sec["pytrec_eval"] = round(t_build + t_eval, 3)
    sec["pytrec_eval_parts"] = {"build": round(t_build, 3), "evaluate": round(t_eval, 3)}
    worst = max(abs(row[t] - ours[q][name]) for q, row in ref.items() for t, name in PAIRS.items())
    worst_lists = max(
        abs(a - b)
        for q in ours
        for a, b in zip(ours[q].values(), ours_lists[q].values(), strict=True)
    )
    result["max_abs_diff_per_query"] = {
        "localeval_vs_pytrec_eval": worst,
        "ranked_lists_vs_scores": worst_lists,
    }
    result["speedup_vs_pytrec_eval"] = round(sec["pytrec_eval"] / sec["localeval"], 2)
    ref.clear()
    ours_lists.clear()

    if not args.no_ranx and version("ranx"):
        warnings.filterwarnings("ignore", module="ranx")  # numba type-safety chatter
        from ranx import Qrels, Run
        from ranx import evaluate as ranx_evaluate

        metrics = list(RANX_PAIRS)
        small_q, small_r = generate(50, 10, 1)
        _, t_jit = timed(lambda: ranx_evaluate(Qrels(small_q), Run(small_r), metrics))
        (rq, rr), t_build = timed(lambda: (Qrels(qrels), Run(run)))
        ranx_means, t_eval = timed(lambda: ranx_evaluate(rq, rr, metrics))
        sec["ranx"] = round(t_build + t_eval, 3)
        sec["ranx_parts"] = {
            "build": round(t_build, 3),
            "evaluate": round(t_eval, 3),
            "jit_warmup_not_counted": round(t_jit, 3),
        }
        ours_means = {
            name: float(np.mean([row[name] for row in ours.values()]))
            for name in RANX_PAIRS.values()
        }
        result["max_abs_diff_of_means_vs_ranx"] = max(
            abs(float(ranx_means[m]) - ours_means[name]) for m, name in RANX_PAIRS.items()
        )
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
