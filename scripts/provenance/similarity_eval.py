"""answer_similarity on the dev pairs and the bundled example, as JSON.

Pairs (pairwise accuracy: share of pairs where the right answer scores above the wrong one,
ties ½), each set split into a first half (where similarity.COSINE_WEIGHT was fitted: the
grid value in 0..0.5 with the best worst-set accuracy, of tied values the middle of the
longest run, shown as `fit`) and a second half (reported, not tuned on). The grid stops at 0.5
so that the embedding alone, with no content term shared, gives at most half credit: weights
0.9-1.65 tie on the first halves too, but give a wrong answer on the same topic about 0.8
(the example's insulin row: rescaled cosine 0.64 from m3e-small).

- halluqa (zh, 67): ground truth `Best Answer2`, right `Best Answer1`, wrong `Wrong_Answer1`;
- halueval_qa (en, 200): HaluEval QA has one right answer, so the reference is `knowledge`
  (the passage the answer comes from), right `right_answer`, wrong `hallucinated_answer`.

Embedders as a run picks them (models dir from LOCALEVAL_MODELS_DIR / --models-dir): the
manifest's embedder of each language when present, else m3e-small for both.

    HF_HUB_OFFLINE=1 python scripts/provenance/similarity_eval.py [--data ../shared/data/dev]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from localeval.meta_eval import stats  # noqa: E402
from localeval.metrics import similarity  # noqa: E402
from localeval.models import embed  # noqa: E402
from localeval.models.embed import EmbeddingStore  # noqa: E402
from scripts.provenance.convert import dev_rows  # noqa: E402


def pairwise(right: np.ndarray, wrong: np.ndarray) -> float:
    diff = right - wrong
    return float(np.mean(np.where(np.abs(diff) <= 1e-9, 0.5, (diff > 0).astype(float))))


def load_sets(data: Path) -> dict[str, tuple[str, list[str], list[str], list[str]]]:
    """name → (language, references, right answers, wrong answers)."""
    hq, he = dev_rows("halluqa", data), dev_rows("halueval", data)
    return {
        "halluqa": ("zh", [r["Best Answer2"] for r in hq], [r["Best Answer1"] for r in hq],
                    [r["Wrong_Answer1"] for r in hq]),
        "halueval_qa": ("en", [r["knowledge"] for r in he], [r["right_answer"] for r in he],
                        [r["hallucinated_answer"] for r in he]),
    }


async def parts(store: EmbeddingStore, language: str, answers: list[str], truths: list[str]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(raw cosine, rescaled cosine, overlap) per row."""
    base = await store.baseline(language)
    va, vg = await store.vectors(answers), await store.vectors(truths)
    cos = np.clip((va * vg).sum(axis=1), -1.0, 1.0)
    rescaled = np.asarray([similarity.rescale(float(c), base) for c in cos])
    shared = np.asarray([similarity.overlap(a, g) for a, g in zip(answers, truths, strict=True)])
    return cos, rescaled, shared


def new(p: tuple[np.ndarray, ...], part: slice, weight: float) -> np.ndarray:
    return np.asarray([similarity.blend(float(o), float(r), weight)
                       for o, r in zip(p[2][part], p[1][part], strict=True)])


def figures(right: tuple[np.ndarray, ...], wrong: tuple[np.ndarray, ...], weight: float
            ) -> dict[str, Any]:
    n = len(right[0]) // 2
    out: dict[str, Any] = {"pairs": len(right[0])}
    for half, part in (("first_half", slice(0, n)), ("second_half", slice(n, None)),
                       ("all", slice(None))):
        out[half] = {"raw": round(pairwise(right[0][part], wrong[0][part]), 3),
                     "new": round(pairwise(new(right, part, weight), new(wrong, part, weight)), 3)}
    out["as_labelled_rows"] = labelled(right, wrong, weight)
    return out


def labelled(right: tuple[np.ndarray, ...], wrong: tuple[np.ndarray, ...], weight: float
             ) -> dict[str, Any]:
    """Every answer a row (right 1, wrong 0): AUROC across questions, and the agreement and
    Cohen's kappa of score ≥ 0.5 with the label (as meta-eval reports labelled rows)."""
    labels = [1] * len(right[0]) + [0] * len(wrong[0])
    out = {}
    raw = np.concatenate([np.maximum(right[0], 0), np.maximum(wrong[0], 0)])
    ours = np.concatenate([new(right, slice(None), weight), new(wrong, slice(None), weight)])
    for name, scores in (("raw", raw), ("new", ours)):
        said = [int(v >= 0.5) for v in scores]
        kappa = stats.cohen_kappa(said, labels)
        out[name] = {"auroc": round(stats.auroc(list(scores), labels) or 0.0, 3),
                     "agreement": round(float(np.mean(np.equal(said, labels))), 3),
                     "kappa": None if kappa is None else round(kappa, 3)}
    return out


def fit(grid: list[float], worst: list[float]) -> float:
    """The middle of the longest run of grid values with the best worst-set accuracy."""
    best, runs, run = max(worst), [], []
    for w, v in zip(grid, worst, strict=True):
        if v == best:
            run.append(w)
        elif run:
            runs.append(run)
            run = []
    runs.append(run) if run else None
    longest = max(runs, key=len)
    return longest[(len(longest) - 1) // 2]


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", type=Path,
                    help="the dev files' folder (default ../shared/data/dev)")
    args = ap.parse_args()
    stores = {lang: embed.language_store(lang) for lang in ("zh", "en")}
    fallback = next((s for s in stores.values() if s is not None), None)
    if fallback is None:
        sys.exit("no embedder present: run `localeval models pull m3e-small`")
    store = {lang: s or fallback for lang, s in stores.items()}
    sets: dict[str, Any] = {}
    for name, (lang, truths, right, wrong) in load_sets(args.data).items():
        sets[name] = (lang, await parts(store[lang], lang, right, truths),
                      await parts(store[lang], lang, wrong, truths))
    grid = [round(0.05 * i, 2) for i in range(11)]  # 0..0.5: the cosine alone, half credit
    worst = [min(figures(r, wr, w)["first_half"]["new"] for _, r, wr in sets.values())
             for w in grid]
    example = []
    for line in (ROOT / "localeval" / "examples" / "example.jsonl").read_text("utf-8").split("\n"):
        if line.strip():
            row = json.loads(line)
            lang = "zh" if row["id"].startswith("seed") else "en"
            cos, resc, shared = await parts(store[lang], lang, [row["answer"]],
                                            [row["ground_truth"]])
            example.append({"id": row["id"], "raw": round(float(cos[0]), 3),
                            "new": round(similarity.blend(float(shared[0]), float(resc[0])), 3)})
    print(json.dumps({
        "embedders": {lang: s.embedder.name for lang, s in store.items()},
        "baselines": {lang: round(await s.baseline(lang), 3) for lang, s in store.items()},
        "cosine_weight": similarity.COSINE_WEIGHT,
        "fit": {"cosine_weight": fit(grid, worst), "worst_first_half": max(worst),
                "grid": dict(zip(map(str, grid), worst, strict=True))},
        "sets": {name: figures(r, wr, similarity.COSINE_WEIGHT)
                 for name, (_, r, wr) in sets.items()},
        "example": example,
    }, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    asyncio.run(main())
