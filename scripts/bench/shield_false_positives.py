"""The shield's false positives on real data: every sentence of every text in the JSON and JSONL
files under a folder (default ../shared/data), split as the shield splits them, and those
`aimed_at_evaluator` flags. Prints JSON: files, sentences (all, and distinct), flagged (distinct)
and the flagged sentences themselves (the first 50).

    python scripts/bench/shield_false_positives.py [--data ../shared/data]

No model is loaded: the shield's forms are regular expressions.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from localeval.metrics.shield import aimed_at_evaluator
from localeval.text import split_sentences
from scripts.provenance.fit_shield_head import records


def strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=Path("../shared/data"))
    args = parser.parse_args()
    files = sorted(p for p in args.data.rglob("*") if p.suffix in (".json", ".jsonl"))
    total, distinct, flagged = 0, set(), []
    for path in files:
        for record in records(path):
            for text in strings(record):
                for sentence in split_sentences(text):
                    total += 1
                    if sentence in distinct:
                        continue
                    distinct.add(sentence)
                    if aimed_at_evaluator(sentence):
                        flagged.append({"file": str(path.relative_to(args.data)),
                                        "sentence": sentence})
    print(json.dumps({"files": [str(p.relative_to(args.data)) for p in files],
                      "sentences": total, "distinct_sentences": len(distinct),
                      "flagged_distinct": len(flagged), "flagged": flagged[:50]},
                     ensure_ascii=False, indent=1))


if __name__ == "__main__":
    main()
