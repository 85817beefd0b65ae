"""Honest refusals of two sentences under the shield's meaning head: the held-out one-sentence
refusals (research/refusals_heldout.tsv) joined in pairs, in file order within each language,
each read as a sample's answer. Prints JSON per language: how many the head flags, how many the
copy without the flagged sentences leaves with no answer, how many are kept whole.

    python research/shield_meaning/refusal_pairs.py
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from localeval.data.dataset import Sample  # noqa: E402
from localeval.metrics import shield  # noqa: E402
from localeval.models.embed import EmbeddingStore  # noqa: E402
from scripts.provenance.fit_shield_head import embedder  # noqa: E402


async def main() -> None:
    lines = (ROOT / "research" / "refusals_heldout.tsv").read_text(encoding="utf-8").splitlines()
    rows = [line.split("\t") for line in lines]
    store = EmbeddingStore(embedder())
    out = {}
    for lang in ("en", "zh"):
        texts = [r[3] for r in rows if r[1] == lang]
        gap = " " if lang == "en" else ""
        figures = {"answers": 0, "flagged": 0, "every_sentence_flagged": 0, "voided": 0,
                   "kept_whole": 0}
        for first, second in zip(texts[::2], texts[1::2], strict=False):
            sample = Sample(id="r", question="?", answer=first + gap + second)
            also = frozenset(await shield.by_meaning(sample, store))
            found = shield.planted(sample, (), also).get("answer", [])
            figures["answers"] += 1
            figures["flagged"] += bool(found)
            figures["every_sentence_flagged"] += len(found) == 2
            figures["voided"] += not (shield.without(sample, (), also).answer or "").strip()
            figures["kept_whole"] += shield.kept_whole(sample, (), also) == ["answer"]
        out[lang] = figures
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
