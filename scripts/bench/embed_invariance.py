"""Does an answer's embedding depend on the texts batched with it? Prints JSON: the largest
difference of one text's vector between two batch compositions (half the texts with each
other, then each beside another text, then alone) for sentence-transformers batched (32), one
text per pass, and localeval's fixed shapes (SentenceTransformerEmbedder.encode), with the
seconds per text of each.

    python scripts/bench/embed_invariance.py [--embedder models/m3e-small] [--n 120] [--zh]
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[2]
DATA = REPO.parent / "shared" / "data" / "dev"


def texts(n: int, zh: bool) -> list[str]:
    name, keys = (("uhgeval_dev.jsonl", ("realContinuation", "hallucinatedContinuation"))
                  if zh else ("halueval_qa_dev.jsonl", ("right_answer", "hallucinated_answer",
                                                        "question")))
    out: list[str] = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        out += [str(row[k]) for k in keys if row.get(k)]
    return out[:n]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--embedder", type=Path, default=None)
    parser.add_argument("--n", type=int, default=120)
    parser.add_argument("--zh", action="store_true")
    args = parser.parse_args()
    from localeval import models
    from localeval.models.embed import SentenceTransformerEmbedder

    path = args.embedder
    if path is None:
        spec = models.load_manifest().get("m3e-small")
        path = spec.path()
    emb = SentenceTransformerEmbedder(path, "measure")
    items = texts(args.n, args.zh)
    half = len(items) // 2
    out: dict[str, object] = {"embedder": path.name, "texts": len(items)}
    def st(batch: int):  # sentence-transformers' own encode, `batch` texts a pass
        return lambda some: emb.model.encode(some, batch_size=batch, normalize_embeddings=True,
                                             convert_to_numpy=True, show_progress_bar=False)

    ways = {"batched_32": st(32), "one_per_pass": st(1), "localeval_fixed_shapes": emb.encode}
    for label, encode in ways.items():
        t = time.perf_counter()
        alone = encode(items[:half])  # the first half with each other
        seconds = time.perf_counter() - t
        rest = items[half:]
        random.Random(7).shuffle(rest)
        mixed = encode([x for pair in zip(items[:half], rest, strict=False) for x in pair])[::2]
        single = np.stack([encode([x])[0] for x in items[:8]])  # each text by itself
        diff = np.abs(alone.astype(np.float64) - mixed.astype(np.float64)).max(axis=1)
        diff1 = np.abs(alone[:8].astype(np.float64) - single.astype(np.float64)).max(axis=1)
        out[label] = {"seconds_per_text": round(seconds / half, 4),
                      "max_abs_diff": float(max(diff.max(), diff1.max())),
                      "texts_changed": int((diff > 0).sum()), "of": half,
                      "alone_changed": int((diff1 > 0).sum()), "alone_of": 8}
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
