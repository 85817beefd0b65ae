"""Train the `small` profile's verifier head from ../shared/data/train and measure it on dev.

The provenance of research/verifier/*.json (not adopted, so not packaged). Steps (each reads
the stored activations of scripts/verifier/extract_rows.py; nothing here judges):
1. the training claims (scripts/verifier/build_training.py) and the dev pairs
   (scripts/verifier/dev_pairs.py) as tables;
2. `--sweep`: for each layer set × C, claim AUROC out of fold on train (grouped by source row)
   and dev pairwise per set — the curve;
3. leave-one-dataset-out: for each dev kind, a head trained without its dataset, against the
   judge's raw P and a baseline that knows only the claim's length and word overlap;
4. the head with the chosen settings, trained on every training claim, τ per language from
   out-of-fold predictions, written with its provenance.

    python scripts/verifier/train_head.py --train runs/verifier/train.jsonl \\
        --dev runs/verifier/dev.jsonl --store runs/verifier/store [--sweep] [--write HEAD.json]
        [--ids scripts/verifier/train_ids.txt] [--layers 17] [--C 0.01]
That head: `--train` from `build_training.py --paraphrases
scripts/verifier/data/paraphrases.jsonl --embellished scripts/verifier/data/embellished.jsonl`,
`--ids scripts/verifier/train_ids.txt --layers 17 --C 0.01` (layer and C chosen by the
out-of-fold claim AUROC on train, never on dev). train_ids.txt names the 808 rows whose states
were read: 326 of the original rows, and every paraphrase and added-detail row.
Prints JSON (the curve, the LODO table, the final figures).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

from localeval.config import Settings
from localeval.meta_eval.stats import auroc
from localeval.metrics.claims.verdicts import FITTED
from localeval.verifier.extract import STEP, extract
from localeval.verifier.fit import Pair, fit, out_of_fold, pair_accuracy, taus_for
from localeval.verifier.head import Head, save_head
from localeval.verifier.table import Table, build_table

SWEEP = [8, 14, 17, 20, 23, 26, -1]  # the layers extract_rows.py reads, in this order
N_EMBD = 1536
RAW_TAU = FITTED  # the τ the raw path uses
SOURCES = {"halueval_qa": "halueval", "halueval_summarization": "halueval_summarization",
           "uhgeval": "uhgeval"}


def cols(layers: list[int]) -> np.ndarray:
    return np.concatenate([np.arange(SWEEP.index(il) * N_EMBD, (SWEEP.index(il) + 1) * N_EMBD)
                           for il in layers])


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]


def load(args: argparse.Namespace
         ) -> tuple[Table, list[str], Table, list[Pair], list[str], Table, Table]:
    """Train and dev tables, each claim's source and each pair's set, and the two tables
    again with only the length-and-overlap features (the baseline)."""
    settings = Settings(profile="small")
    train_rows = _rows(args.train)
    if args.ids is not None:
        wanted = set(args.ids.read_text(encoding="utf-8").split())
        train_rows = [r for r in train_rows if r["id"] in wanted]
    feats = extract([(r["id"], r) for r in train_rows], args.store, settings, SWEEP,
                    stored_only=args.stored_only)
    if args.stored_only:  # the rows whose states are stored, in the order of the file
        held = {f.row_id for f in feats}
        train_rows = [r for r in train_rows if r["id"] in held]
    train = build_table(feats, {r["id"]: r["claim_labels"] for r in train_rows},
                        {r["id"]: r["id"].rsplit("-", 1)[0] for r in train_rows})
    sources = [r["source"] for r in train_rows]
    dev_pairs = _rows(args.dev)
    ids = [(f"{p['pair_id']}/{s}", p[s]) for p in dev_pairs for s in ("a", "b")]
    dfeats = extract(ids, args.store, settings, SWEEP, stored_only=args.stored_only)
    if args.stored_only:  # pairs with both sides stored
        held = {f.row_id for f in dfeats}
        dev_pairs = [p for p in dev_pairs if {f"{p['pair_id']}/a", f"{p['pair_id']}/b"} <= held]
        ids = [(f"{p['pair_id']}/{s}", p[s]) for p in dev_pairs for s in ("a", "b")]
        by_id = {f.row_id: f for f in dfeats}
        dfeats = [by_id[rid] for rid, _ in ids]
    dev = build_table(dfeats, {}, {rid: rid.rsplit("/", 1)[0] for rid, _ in ids})
    pairs = [Pair(2 * i, 2 * i + 1, p["preferred"]) for i, p in enumerate(dev_pairs)]
    sets = [p["meta"]["set"] for p in dev_pairs]
    base_train = baseline_table(train, text_features([(r["id"], r) for r in train_rows], feats))
    base_dev = baseline_table(dev, text_features(ids, dfeats))
    return train, sources, dev, pairs, sets, base_train, base_dev


def dev_figures(dev: Table, pairs: list[Pair], sets: list[str], p: np.ndarray,
                tau: dict[str, float]) -> dict[str, dict[str, float]]:
    out = {}
    for name in sorted(set(sets)):
        chosen = [pr for pr, s in zip(pairs, sets, strict=True) if s == name]
        out[name] = {k: round(v, 3) for k, v in pair_accuracy(dev, chosen, p, tau).items()}
    return out


def claim_auroc(table: Table, p: np.ndarray, sources: list[str]) -> dict[str, float | None]:
    src = np.array([sources[r] for r in table.row])
    out = {}
    for name in sorted(set(sources)):
        keep = (src == name) & ~np.isnan(table.label)
        a = auroc(list(p[keep]), [int(v) for v in table.label[keep]])
        out[name] = None if a is None else round(a, 3)
    return out


def baseline_table(table: Table, feats_text: list[tuple[float, float]]) -> Table:
    """The same claims with only [length, overlap] as features (no judge state, no P)."""
    X = np.array(feats_text, dtype=np.float32)
    return Table(X, np.full(len(table.p), 0.5), table.label, table.row, table.overruled,
                 table.rows)


def text_features(rows: list[tuple[str, dict[str, Any]]], feats: list[Any]
                  ) -> list[tuple[float, float]]:
    """Per judged claim: log of its words, and the share of its words found in the context."""
    from localeval.text import normalize

    out = []
    for (_, row), f in zip(rows, feats, strict=True):
        context = set(normalize(" ".join(row.get("contexts") or [])).split()) | set(
            "".join(row.get("contexts") or []))
        for c in f.claims:
            if c.hidden is None:
                continue
            words = normalize(c.statement).split() or list(c.statement)
            tokens = words if len(words) > 1 else list(c.statement)
            overlap = np.mean([w in context for w in tokens]) if tokens else 0.0
            out.append((float(np.log1p(len(tokens))), float(overlap)))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--train", type=Path, required=True)
    ap.add_argument("--dev", type=Path, required=True)
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--sweep", action="store_true")
    ap.add_argument("--layers", default="17,23")
    ap.add_argument("--C", type=float, default=0.05)
    ap.add_argument("--no-p", action="store_true", help="leave the judge's logit(P) out")
    ap.add_argument("--write", type=Path, help="write the head here")
    ap.add_argument("--ids", type=Path,
                    help="train on these rows only (one id a line; scripts/verifier/train_ids.txt "
                         "names the rows research/verifier's head was trained on)")
    ap.add_argument("--stored-only", action="store_true",
                    help="use the rows whose states are stored; judge nothing")
    args = ap.parse_args()
    train, sources, dev, pairs, sets, base_train, base_dev = load(args)
    report: dict[str, Any] = {"train_claims": int((~np.isnan(train.label)).sum()),
                              "dev_pairs": {s: sets.count(s) for s in sorted(set(sets))}}
    report["raw"] = {"train_auroc": claim_auroc(train, train.p, sources),
                     "dev": dev_figures(dev, pairs, sets, dev.p, RAW_TAU)}
    base = fit(base_train, C=1.0, with_p=False)
    base_tau = taus_for(base_train, base.predict(base_train))
    report["length_overlap_baseline"] = {
        "train_auroc": claim_auroc(base_train, base.predict(base_train), sources),
        "dev": dev_figures(base_dev, pairs, sets, base.predict(base_dev), base_tau)}
    layers = [int(x) for x in args.layers.split(",")]
    options = {"C": args.C, "with_p": not args.no_p}
    if args.sweep:
        curve = []
        for ls in ([il] for il in SWEEP):
            for C in (0.01, 0.05, 0.25):
                t, d = train.columns(cols(ls)), dev.columns(cols(ls))
                oof = out_of_fold(t, [], 5, C=C, with_p=True)
                model = fit(t, C=C, with_p=True)
                tau = taus_for(t, oof)
                curve.append({"layers": ls, "C": C, "train_auroc": claim_auroc(t, oof, sources),
                              "dev": dev_figures(d, pairs, sets, model.predict(d), tau)})
                print(json.dumps(curve[-1]), file=sys.stderr, flush=True)
        report["curve"] = curve
    t, d = train.columns(cols(layers)), dev.columns(cols(layers))
    # leave one dataset out: trained without the dataset of each dev kind
    lodo = {}
    for held, dev_set in SOURCES.items():
        keep = [r for r in range(len(t.rows)) if sources[r] != held]
        sub = t.subset_rows(keep)
        if not len(sub.p) or dev_set not in sets:
            continue
        m = fit(sub, **options)
        tau = taus_for(sub, m.predict(sub))
        lodo[dev_set] = dev_figures(d, pairs, sets, m.predict(d), tau)[dev_set]
    oof = out_of_fold(t, [], 5, **options)
    tau = taus_for(t, oof)
    model = fit(t, **options)
    report["head"] = {"layers": layers, **options, "tau": tau,
                      "train_auroc_out_of_fold": claim_auroc(t, oof, sources),
                      "dev": dev_figures(d, pairs, sets, model.predict(d), tau),
                      "leave_one_dataset_out": lodo}
    print(json.dumps(report, indent=1))
    if args.write:
        write_head(args, model, layers, tau, report)
    return 0


def write_head(args: argparse.Namespace, model: Any, layers: list[int], tau: dict[str, float],
               report: dict[str, Any]) -> None:
    from localeval import models, prompts

    manifest = models.load_manifest()
    spec = manifest.get(manifest.profile("small")["judge"])
    digest = {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
              for p in (args.train, args.dev, args.ids) if p is not None}
    head = Head.build(
        mean=model.mean, scale=model.scale, weights=model.w, bias=model.b,
        judge_sha256=models.expected_sha256(spec),
        templates={f"{lang}/{STEP}": prompts.template_sha256(lang, STEP) for lang in ("en", "zh")},
        layers=layers, n_embd=N_EMBD, with_p=model.with_p, tau=tau,
        trained_on={"script": "scripts/verifier/train_head.py", "rows_sha256": digest,
                    "claims": report["train_claims"]},
        reached={k: report["head"][k] for k in ("train_auroc_out_of_fold", "dev")})
    save_head(head, args.write)


if __name__ == "__main__":
    raise SystemExit(main())
