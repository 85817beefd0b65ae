"""Build the citation dev set (issue 50 item 4): answers that cite their passages, and the same
answers with a citation moved to the wrong passage, from HaluEval QA (en) and UHGEval (zh).

Each source row gives three contexts, in an order that varies from row to row: two passages of
one topic (P1, P2) and a passage of another row (P3). The answer has two sentences, S1 drawn
from P1 and S2 from P2:
- en: S1 is P1's first sentence; S2 is the row's right answer, a fragment judged with its
  question, and P2 is the half of the knowledge that holds it;
- zh: S1 is the news lead's first sentence without its dateline; S2 the first sentence of the
  real continuation (P2).
Four answers per row, one sample each (`variant`):
- `correct`: S1 [P1] S2 [P2];
- `swap`: S1 [P2] S2 [P1] (each cited to the other passage of the same topic);
- `far`: S1 [P1] S2 [P3] (S2 cited to the other row's passage);
- `overcite`: S1 [P1][P3] S2 [P2] (an unneeded citation beside the right one).
`correct` must score above `swap` and `far` on both metrics, and above `overcite` on
citation_precision (their citation_recall is equal). The sentences copy their passage (S2 of en
is a fragment): paraphrase is not covered.

Rows are taken from the end of each dev file (the τ fit used their first halves), written
before any judge saw them, and not tuned on:

    python scripts/provenance/citations_dev.py --out research/citations_dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from convert import dev_rows

from localeval.text import split_sentences

ORDERS = [(0, 1, 2), (1, 2, 0), (2, 0, 1), (1, 0, 2), (0, 2, 1), (2, 1, 0)]
"""Where P1, P2, P3 go among the contexts (0-based), by row."""
DATELINE = re.compile(r"^\s*新华社[^电]{0,20}电(?:（[^）]*）)?\s*")


def marks(numbers: list[int], language: str, k: int) -> str:
    """Markers in the forms answers write, varied by row: [1], [1][3], [1, 3], 【1】."""
    if language == "zh" and k % 2:
        return "".join(f"【{n}】" for n in numbers)
    if k % 3 == 2 and len(numbers) > 1:
        return "[" + ", ".join(map(str, numbers)) + "]"
    return "".join(f"[{n}]" for n in numbers)


def answer(s1: str, c1: list[int], s2: str, c2: list[int], language: str, k: int) -> str:
    """S1 and S2 with their markers: before the end punctuation on even rows, after it on odd."""
    out = []
    for s, c in ((s1, c1), (s2, c2)):
        body, end = (s[:-1], s[-1]) if s and s[-1] in ".。!！?？" else (s, "。" if language ==
                                                                         "zh" else ".")
        m = marks(c, language, k)
        out.append(f"{body}{' ' if language == 'en' else ''}{m}{end}" if k % 2 == 0
                   else f"{body}{end}{' ' if language == 'en' else ''}{m}")
    return (" " if language == "en" else "").join(out)


def en_rows(n: int) -> list[dict[str, Any]]:
    raw = dev_rows("halueval")
    out: list[dict[str, Any]] = []
    for j in range(len(raw) - 1, -1, -1):
        r = raw[j]
        sents = split_sentences(r["knowledge"])
        if len(sents) < 2:
            continue
        half = len(sents) // 2
        halves = [" ".join(sents[:half]), " ".join(sents[half:])]
        key = r["right_answer"].casefold()
        holds = [key in h.casefold() for h in halves]
        if holds.count(True) != 1 or len(r["right_answer"].split()) > 8:
            continue
        p2 = halves[holds.index(True)]
        p1 = halves[holds.index(False)]
        s1 = split_sentences(p1)[0]
        if not 6 <= len(s1.split()) <= 40 or re.search(r"[.!?][\"'”’][A-Z]", s1):
            continue  # (two sentences glued by a quote: "… Warrior."Miranda …")
        out.append({"source": r["id"], "question": r["question"], "p1": p1, "p2": p2,
                    "s1": s1, "s2": r["right_answer"].strip().rstrip(".") + "."})
        if len(out) == n:
            break
    return out


def zh_rows(n: int) -> list[dict[str, Any]]:
    raw = dev_rows("uhgeval")
    out: list[dict[str, Any]] = []
    for j in range(len(raw) - 1, -1, -1):
        r = raw[j]
        p1 = r["newsBeginning"].strip()
        p2 = next((p.strip() for p in r["realContinuation"].split("\n") if p.strip()), "")
        s1 = DATELINE.sub("", (split_sentences(p1) or [""])[0]).strip()
        s2 = (split_sentences(p2) or [""])[0]
        if not (10 <= len(s1) <= 80 and 10 <= len(s2) <= 80 and s1.endswith("。")
                and s2.endswith("。")):
            continue
        out.append({"source": r["id"], "question": r["headLine"].strip(), "p1": p1, "p2": p2,
                    "s1": s1, "s2": s2})
        if len(out) == n:
            break
    return out


def samples(rows: list[dict[str, Any]], language: str) -> list[dict[str, Any]]:
    out = []
    for k, r in enumerate(rows):
        p3 = rows[(k + 3) % len(rows)]["p1"]  # another row's passage: another topic
        order = ORDERS[k % len(ORDERS)]
        contexts = [""] * 3
        for passage, at in zip((r["p1"], r["p2"], p3), order, strict=True):
            contexts[at] = passage
        n1, n2, n3 = (at + 1 for at in order)
        variants = {"correct": ([n1], [n2]), "swap": ([n2], [n1]), "far": ([n1], [n3]),
                    "overcite": ([n1, n3], [n2])}
        for name, (c1, c2) in variants.items():
            out.append({"id": f"{r['source']}:{name}", "pair": r["source"], "variant": name,
                        "language": language, "question": r["question"],
                        "answer": answer(r["s1"], c1, r["s2"], c2, language, k),
                        "contexts": contexts})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--per-language", type=int, default=8)
    args = parser.parse_args()
    rows = (samples(en_rows(args.per_language), "en")
            + samples(zh_rows(args.per_language), "zh"))
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                        encoding="utf-8")
    print(json.dumps({"samples": len(rows), "out": str(args.out)}))


if __name__ == "__main__":
    main()
