"""Which samples of meta-eval pair files the shield flags, by the forms and by the meaning head
(no judge; the embedder): per file, samples and pairs with a flagged side, and the sentences
the head flags that no form matches. A set with no sample flagged by the head scores the same
under `--shield meaning` as under `--shield forms` (an unflagged sample's requests and scores
are the metric's own). Prints JSON.

    python scripts/bench/shield_flagged_pairs.py runs/dev/*-report.jsonl
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from localeval.data.dataset import Sample  # noqa: E402
from localeval.metrics.shield import aimed_at_evaluator, by_meaning, material_sentences  # noqa: E402
from scripts.provenance.fit_shield_head import embedder  # noqa: E402


async def main(paths: list[Path]) -> int:
    from localeval.models.embed import EmbeddingStore

    store = EmbeddingStore(embedder())
    out = {}
    for path in paths:
        pairs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
                 if line.strip()]
        samples, pair_hits, sentences = 0, 0, {}
        forms_samples = 0
        for pair in pairs:
            hit = False
            for side in ("a", "b"):
                sample = Sample(id=f"{pair['pair_id']}/{side}", **pair[side])
                forms = [s for s in material_sentences(sample) if aimed_at_evaluator(s)]
                meaning = await by_meaning(sample, store)
                samples += 1
                forms_samples += bool(forms)
                if meaning:
                    hit = True
                    sentences[f"{pair['pair_id']}/{side}"] = meaning
            pair_hits += hit
        out[path.name] = {"pairs": len(pairs), "samples": samples,
                          "samples_flagged_by_forms": forms_samples,
                          "samples_flagged_by_meaning": len(sentences),
                          "pairs_with_a_side_flagged_by_meaning": pair_hits,
                          "flagged": sentences}
    print(json.dumps(out, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(asyncio.run(main([Path(p) for p in sys.argv[1:]])))
