"""Write a folder of linked English Wikipedia openings from ../shared/data's HaluEval QA rows,
for measuring how often `generate` writes a bridge that survives: each row whose knowledge is
two openings, the first naming the second's subject, gives two Markdown pages titled by their
subjects (the subject is what the opening's first sentence is about: "Joan Crawford (born …)
was …" → "Joan Crawford"). Rows whose first opening starts with a pronoun or "The <noun>" and
rows whose two subjects are one are skipped.

    python scripts/bench/bridge_folder.py ../shared/data DIR [--split train|dev] [--rows 16]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

SUBJECT = re.compile(r"^([A-Z][^(),]{2,60}?)(?: \([^)]*\))?,? (?:is|was|are|were)\b")
"""An opening's subject: its opening words, up to a comma or parenthesis, before is / was
("Joan Crawford (born …) was" → "Joan Crawford")."""
NOT_A_NAME = re.compile(r"^(?:The|Its|His|Her|Their|It|He|She|They|This)(?: [a-z]\w*)?$")
"""A subject that is no name: "The town", "Its capital", "He"."""


def linked(row: dict) -> tuple[str, str, str, str] | None:
    """(title A, text A, title B, text B) when row's knowledge is two openings and A writes
    B's subject as whole words; else None."""
    parts = re.split(r"(?<=[.!?\")])(?=[A-Z])", row["knowledge"].strip(), maxsplit=1)
    if len(parts) != 2:
        return None
    a, b = (p.strip() for p in parts)
    ma, mb = SUBJECT.match(a), SUBJECT.match(b)
    if not (ma and mb):
        return None
    ta, tb = ma.group(1).strip(), mb.group(1).strip()
    if ta == tb or len(tb) < 4 or NOT_A_NAME.match(ta) or NOT_A_NAME.match(tb):
        return None
    if not re.search(rf"(?<![A-Za-z0-9]){re.escape(tb)}(?![A-Za-z0-9])", a):
        return None
    return ta, a, tb, b


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("data", type=Path, help="../shared/data")
    ap.add_argument("out", type=Path, help="the folder to write")
    ap.add_argument("--split", choices=["train", "dev"], default="dev")
    ap.add_argument("--rows", type=int, default=16, help="linked rows written, at most")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    path = args.data / args.split / f"halueval_qa_{args.split}.jsonl"
    written = 0
    for line in path.read_text("utf-8").splitlines():
        if written >= args.rows:
            break
        if (pages := linked(json.loads(line))) is None:
            continue
        for title, text in (pages[:2], pages[2:]):
            name = re.sub(r"\W+", "_", title).strip("_").lower()
            (args.out / f"{name}.md").write_text(f"# {title}\n\n{text}\n", "utf-8")
        written += 1
    print(json.dumps({"rows": written, "pages": len(list(args.out.glob("*.md")))}))


if __name__ == "__main__":
    main()
