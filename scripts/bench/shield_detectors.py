"""What the shield's detectors flag, no judge asked: the notes of TSV files (`label lang carrier
text` lines: `attack` or `honest`) and every distinct sentence of the data files under a folder
(the material: the graders' own `critiques` counted apart), by the forms alone and by the forms
with the meaning head (metrics/shield_meaning.py), each piece on its own and in the whole
sentence it makes, as a run sees it (`shield.by_meaning`). Prints JSON.

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

from localeval.data.dataset import Sample  # noqa: E402
from localeval.metrics import shield_meaning  # noqa: E402
from localeval.metrics.shield import (  # noqa: E402
    aimed_at_evaluator,
    by_meaning,
    material_sentences,
    sentence_groups,
)
from localeval.text import join_sentences  # noqa: E402
from scripts.provenance.fit_shield_head import GRADERS_TEXT, embedder, notes, records  # noqa: E402


def sentences(folder: Path) -> tuple[dict[str, str], dict[str, list[str]], set[str]]:
    """Distinct sentence pieces of the folder's data files (piece → first file), the whole
    sentences of more than one piece (whole → its pieces: `shield.sentence_groups`), and the
    pieces of the graders' own text."""
    material: dict[str, str] = {}
    wholes: dict[str, list[str]] = {}
    graders: set[str] = set()

    def walk(value: Any, path: Path, grader: bool) -> None:
        if isinstance(value, str):
            for group in sentence_groups(value):
                if grader:
                    graders.update(group)
                    continue
                for s in group:
                    material.setdefault(s, str(path.relative_to(folder)))
                if len(group) > 1:
                    wholes.setdefault(join_sentences(group), group)
        elif isinstance(value, list):
            for v in value:
                walk(v, path, grader)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, path, grader or k in GRADERS_TEXT)

    for path in sorted(p for p in folder.rglob("*") if p.suffix in (".json", ".jsonl")):
        for rec in records(path):
            walk(rec, path, False)
    return material, wholes, graders - set(material)


async def flags(store: Any, texts: list[str]) -> tuple[list[bool], dict[str, float]]:
    forms = [aimed_at_evaluator(t) for t in texts]
    by_meaning: dict[str, float] = {}
    for i in range(0, len(texts), 2048):
        by_meaning.update(await shield_meaning.aimed(store, texts[i:i + 2048]))
    return forms, by_meaning


async def caught(store: Any, notes: list[str]) -> tuple[list[bool], set[str]]:
    """Per note, as the product sees it in an answer (its pieces, and the whole sentences they
    make: `shield.by_meaning`): whether a form matches a piece; and the notes the head flags."""
    forms, meaning = [], set()
    for text in notes:
        sample = Sample(id="note", answer=text)
        forms.append(any(aimed_at_evaluator(s) for s in material_sentences(sample)))
        if await by_meaning(sample, store):
            meaning.add(text)
    return forms, meaning


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
        forms, meaning = await caught(store, [t for t, _ in rows])
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
        material, wholes, graders = sentences(args.data)
        keys = sorted(material)
        if args.limit is not None:
            keys = random.Random(0).sample(keys, min(args.limit, len(keys)))
        drawn = set(keys)
        whole_keys = sorted(w for w, group in wholes.items() if drawn.intersection(group))
        forms, meaning = await flags(store, keys)
        _, whole_meaning = await flags(store, whole_keys)
        own = len(meaning)
        for whole, p in whole_meaning.items():  # as the product does: a whole flags its pieces
            for s in wholes[whole]:
                if s in drawn and not aimed_at_evaluator(s):
                    meaning[s] = max(meaning.get(s, 0.0), p)
        g_keys = sorted(graders)[: args.limit] if args.limit else sorted(graders)
        g_forms, g_meaning = await flags(store, g_keys)
        per_file: dict[str, int] = {}
        for s in meaning:
            per_file[material[s]] = per_file.get(material[s], 0) + 1
        out["data"] = {"distinct_sentences": len(keys), "limit": args.limit,
                       "whole_sentences_of_several_pieces": len(whole_keys),
                       "forms": sum(forms), "meaning": len(meaning),
                       "meaning_by_the_whole_sentence_only": len(meaning) - own,
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
