"""Fit the shield's meaning head (localeval/metrics/shield_head.json): a logistic regression over
the embedder's sentence vectors that tells a sentence aimed at the evaluator from one about the
subject, whatever its wording (metrics/shield_meaning.py).

Fitted on `research/notes_dev.tsv` (notes and honest sentences that talk about grading, en and
zh) and on `--drawn` sentences drawn from the material of ../shared/data/train (seed 0), the
notes weighted up to balance the classes. τ is the head's P that 5-fold cross-validated honest
sentences of the fit side reach at most `--fp` of the time. Never fitted on the held-out notes
(research/notes_heldout*.tsv) nor on dev/: those are what it is measured on (research/
shield_meaning.md).

    python scripts/provenance/fit_shield_head.py [--out localeval/metrics/shield_head.json]
        [--more research/refusals_fit.tsv]

`--more FILE` fits on another TSV of the same form as well (the shipped head has none: the refit
with refusals was measured and dropped, research/shield_meaning.md).

Needs the profile's embedder (m3e-small) in models/ and scikit-learn (installed with
sentence-transformers). Prints the fit's figures as JSON; the same inputs write the same file.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from localeval.text import split_sentences  # noqa: E402

NOTES = ROOT / "research" / "notes_dev.tsv"
TRAIN = ROOT.parent / "shared" / "data" / "train"
GRADERS_TEXT = frozenset({"critiques"})
"""Fields of the data files that are the graders' own writing, not a RAG row's material."""


def notes(path: Path) -> list[tuple[str, int]]:
    """(sentence, 1 for a note aimed at the evaluator) of a `label lang carrier text` TSV."""
    out = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            label, _lang, _carrier, text = line.split("\t", 3)
            out.append((text, int(label == "attack")))
    return out


def material(value: Any) -> Iterator[str]:
    """Every string of a data record but the graders' own text."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from material(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in GRADERS_TEXT:
                yield from material(v)


def records(path: Path) -> Iterator[Any]:
    if path.suffix == ".jsonl":
        with path.open(encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    yield json.loads(line)
    else:
        yield json.loads(path.read_text(encoding="utf-8"))


def drawn(folder: Path, n: int, seed: int) -> list[str]:
    """n distinct sentences (8 characters or more) of the folder's data files, drawn at random."""
    pool: set[str] = set()
    for path in sorted(p for p in folder.rglob("*") if p.suffix in (".json", ".jsonl")):
        for rec in records(path):
            for text in material(rec):
                pool.update(s for s in split_sentences(text) if len(s) >= 8)
    return random.Random(seed).sample(sorted(pool), min(n, len(pool)))


def embedder() -> Any:
    """The default profile's embedder, as a run loads it (fixed shapes, its manifest sha256)."""
    from localeval import models
    from localeval.models.embed import SentenceTransformerEmbedder

    manifest = models.load_manifest()
    spec = manifest.get(manifest.profile("small")["embedder"])
    state = models.check(spec, full=False)
    if not state.ok:
        raise SystemExit(f"{spec.name} is not in models/: run scripts/setup.sh")
    return SentenceTransformerEmbedder(state.path, models.expected_sha256(spec))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "localeval" / "metrics" /
                        "shield_head.json")
    parser.add_argument("--drawn", type=int, default=3000)
    parser.add_argument("--fp", type=float, default=0.005)
    parser.add_argument("--c", type=float, default=4.0, help="inverse regularisation")
    parser.add_argument("--more", type=Path, action="append", default=[],
                        help="another TSV of notes and honest sentences to fit on as well")
    args = parser.parse_args()

    import numpy as np
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import StratifiedKFold, cross_val_predict

    rows = [*notes(NOTES), *(r for path in args.more for r in notes(path)),
            *((s, 0) for s in drawn(TRAIN, args.drawn, 0))]
    emb = embedder()
    x = emb.encode([s for s, _ in rows]).astype(np.float64)
    y = np.array([label for _, label in rows])
    weight = np.where(y == 1, (y == 0).sum() / y.sum(), 1.0)
    model = LogisticRegression(C=args.c, max_iter=5000)
    folds = StratifiedKFold(n_splits=5, shuffle=True, random_state=0)
    p_cv = cross_val_predict(model, x, y, cv=folds, method="predict_proba",
                             params={"sample_weight": weight})[:, 1]
    honest = np.sort(p_cv[y == 0])
    tau = float(honest[min(len(honest) - 1, int((1 - args.fp) * len(honest)))])
    model.fit(x, y, sample_weight=weight)
    head = {
        "embedder": emb.fingerprint,
        "embedder_name": emb.name,
        "tau": round(tau, 6),
        "bias": round(float(model.intercept_[0]), 6),
        "weights": [round(float(w), 6) for w in model.coef_[0]],
        "fitted_on": {"notes": str(NOTES.relative_to(ROOT)),
                      **({"more": [str(m) for m in args.more]} if args.more else {}),
                      "drawn_from": "shared/data/train",
                      "drawn": args.drawn, "seed": 0, "c": args.c, "fp_target": args.fp,
                      "attacks": int(y.sum()), "honest": int((y == 0).sum())},
    }
    args.out.write_text(json.dumps(head, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
    print(json.dumps({"out": str(args.out), "tau": head["tau"],
                      "cv_attacks_caught": int((p_cv[y == 1] >= tau).sum()),
                      "cv_attacks": int(y.sum()),
                      "cv_honest_flagged": int((p_cv[y == 0] >= tau).sum()),
                      "cv_honest": int((y == 0).sum())}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
