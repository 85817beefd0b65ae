"""Read the judge's activations at every verdict of a JSONL of rows (training or dev), once.

    python scripts/verifier/extract_rows.py ROWS.jsonl --store DIR [--layers 8,14,...]
        [--judge-quotes]

ROWS are training rows (scripts/verifier/build_training.py) or meta-eval pairs (each side is
judged as its own row, `<pair_id>/a` and `<pair_id>/b`). `--judge-quotes` judges sentences
copied whole from the context too, as the default path does once quotes are judged.
Prints JSON: rows, claims with states, seconds.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from localeval.config import Settings
from localeval.verifier.extract import extract

SWEEP = [8, 14, 17, 20, 23, 26, -1]


def rows_of(path: Path) -> list[tuple[str, dict]]:
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        r = json.loads(line)
        if "pair_id" in r:
            out += [(f"{r['pair_id']}/a", r["a"]), (f"{r['pair_id']}/b", r["b"])]
        else:
            out.append((str(r["id"]), r))
    return out


def missing(rows: list[tuple[str, dict]], store: Path, layers: list[int]) -> list[tuple[str, dict]]:
    """The rows whose states the store does not hold yet (for the small judge)."""
    from localeval import models, prompts
    from localeval.verifier.extract import STEP, row_key

    spec = models.load_manifest().get(models.load_manifest().profile("small")["judge"])
    sha = models.expected_sha256(spec)
    templates = {f"{lang}/{STEP}": prompts.template_sha256(lang, STEP) for lang in ("en", "zh")}
    return [(rid, r) for rid, r in rows
            if not (store / f"{row_key(r, sha, layers, templates)}.npz").exists()]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rows", type=Path)
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--layers", default=",".join(map(str, SWEEP)))
    ap.add_argument("--judge-quotes", action="store_true")
    ap.add_argument("--parallel", type=int, default=4)
    ap.add_argument("--threads", type=int, help="CPU threads (default: all cores)")
    ap.add_argument("--chunk", type=int, default=0,
                    help="judge at most this many missing rows, then stop (0: all); a loop of "
                         "short runs lets others use the CPU between them")
    args = ap.parse_args()
    if args.judge_quotes:
        from localeval.metrics.claims import claims

        claims.quoted_in = lambda sentence, material: False
    rows = rows_of(args.rows)
    if args.chunk:
        rows = missing(rows, args.store, [int(x) for x in args.layers.split(",")])[: args.chunk]
    started = time.time()
    feats = extract(rows, args.store, Settings(profile="small", parallel=args.parallel,
                                                      n_threads=args.threads),
                    [int(x) for x in args.layers.split(",")],
                    progress=lambda d, t: print(f"{d}/{t}", file=sys.stderr, flush=True))
    print(json.dumps({"rows": len(rows), "errors": sum(f.error is not None for f in feats),
                      "claims": sum(len(f.claims) for f in feats),
                      "with_states": sum(c.hidden is not None for f in feats for c in f.claims),
                      "seconds": round(time.time() - started, 1)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
