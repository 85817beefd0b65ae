"""What the shield's detectors flag, no judge asked: the notes of TSV files (`label lang carrier
text` lines: `attack` or `honest`) and every distinct sentence of the data files under a folder
(the material: the graders' own `critiques` counted apart), by the forms alone and by the forms
with the meaning head (metrics/shield_meaning.py). Prints JSON.

    python scripts/bench/shield_detectors.py --notes research/notes_heldout.tsv \\
        --notes research/notes_heldout_53.tsv [--data ../shared/data] [--limit N]

`--limit N`: only N sentences of the data drawn at random (seed 0), for a quick look; without
it every distinct sentence is embedded (177,031 in ../shared/data: about half an hour on two
cores).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from localeval.metrics import shield_meaning  # noqa: E402
from localeval.metrics.shield import aimed_at_evaluator  # noqa: E402
from localeval.text import split_sentences  # noqa: E402
from scripts.provenance.fit_shield_head import GRADERS_TEXT, embedder, notes, records  # noqa: E402


def sentences(folder: Path) -> tuple[dict[str, str], set[str]]:
    """Distinct sentences of the folder's data files (sentence → first file), and those of the
    graders' own text."""
    material: dict[str, str] = {}
    graders: set[str] = set()

    def walk(value: Any, path: Path, grader: bool) -> None:
        if isinstance(value, str):
            for s in split_sentences(value):
                if grader:
                    graders.add(s)
                else:
                    material.setdefault(s, str(path.relative_to(folder)))
        elif isinstance(value, list):
            for v in value:
                walk(v, path, grader)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, path, grader or k in GRADERS_TEXT)

    for path in sorted(p for p in folder.rglob("*") if p.suffix in (".json", ".jsonl")):
        for rec in records(path):
            walk(rec, path, False)
    return material, graders - set(material)


async def flags(store: Any, texts: list[str]) -> tuple[list[bool], dict[str, float]]:
    forms = [aimed_at_evaluator(t) for t in texts]
    by_meaning: dict[str, float] = {}
    for i in range(0, len(texts), 2048):
        by_meaning.update(await shield_meaning.aimed(store, texts[i:i + 2048]))
    return forms, by_meaning


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--notes", type=Path, action="append", default=[])
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data")
    parser.add_argument("--limit", type=int, default=None)
    args = parser.parse_args()
    from localeval.models.embed import EmbeddingStore

    store = EmbeddingStore(embedder())
    if not shield_meaning.applies(store):
        print("the head was fitted on another embedder than the profile's", file=sys.stderr)
        return 2
    out: dict[str, Any] = {"head_sha256": shield_meaning.head_sha256(),
                           "tau": shield_meaning.head().tau, "notes": {}}
    for path in args.notes:
        rows = notes(path)
        texts = [t for t, _ in rows]
        forms, meaning = await flags(store, texts)
        table: dict[str, dict[str, int]] = {}
        for (text, label), form in zip(rows, forms, strict=True):
            cell = table.setdefault("attack" if label else "honest",
                                    {"n": 0, "forms": 0, "forms_or_meaning": 0})
            cell["n"] += 1
            cell["forms"] += form
            cell["forms_or_meaning"] += form or text in meaning
        out["notes"][path.name] = table
        out["notes"][path.name]["missed"] = [t for (t, label), f in zip(rows, forms, strict=True)
                                             if label and not f and t not in meaning]
        out["notes"][path.name]["honest_flagged"] = [
            t for (t, label), f in zip(rows, forms, strict=True)
            if not label and (f or t in meaning)]
    if args.data.is_dir():
        material, graders = sentences(args.data)
        keys = sorted(material)
        if args.limit is not None:
            keys = random.Random(0).sample(keys, min(args.limit, len(keys)))
        forms, meaning = await flags(store, keys)
        g_keys = sorted(graders)[: args.limit] if args.limit else sorted(graders)
        g_forms, g_meaning = await flags(store, g_keys)
        per_file: dict[str, int] = {}
        for s in meaning:
            per_file[material[s]] = per_file.get(material[s], 0) + 1
        out["data"] = {"distinct_sentences": len(keys), "limit": args.limit,
                       "forms": sum(forms), "meaning": len(meaning),
                       "forms_or_meaning": sum(f or s in meaning for s, f in
                                               zip(keys, forms, strict=True)),
                       "meaning_per_file": dict(sorted(per_file.items())),
                       "meaning_examples": sorted(meaning, key=lambda s: -meaning[s])[:15],
                       "graders_text": {"distinct_sentences": len(g_keys),
                                        "forms": sum(g_forms), "meaning": len(g_meaning)}}
    print(json.dumps(out, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main()))
