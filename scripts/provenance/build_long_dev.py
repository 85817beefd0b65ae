"""Build a long-sample dev set (long answers, long contexts) from ../shared/data/dev.

- English: each sample takes `--group` consecutive HaluEval rows; its contexts are their
  knowledge paragraphs (then other rows' paragraphs, up to the target length), its question
  joins their questions, its answer joins one sentence per question ("Q? A."). The "right"
  sample uses every right answer; its "mixed" twin swaps every other answer for the
  hallucinated one. People prefer the right one.
- Chinese: each sample is a UHGEval article (newsBeginning + newsRemainder), then other
  articles up to the target length, as its contexts; the answer is the real continuation
  followed by the next sentences of the article (a long continuation); its twin starts with the
  hallucinated continuation instead.

Target context length: about 1,600 tokens (6,400 English characters, 2,100 Chinese ones) times
`--scale` (1, 2, 4 for the scaling measurement: the same samples, longer contexts).

Every row carries `pair` (the twin's shared id) and `preferred` (true for the right one), so the
pairs can be scored like the dev pairs. Usage (from the repository root):
    python scripts/provenance/build_long_dev.py --pairs 6 --out runs/long_dev.jsonl
    python scripts/provenance/build_long_dev.py --pairs 3 --scale 4 --out runs/long_4x.jsonl
Prints one JSON line: rows written and the mean context characters per language.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

FOLLOWING_SENTENCES = 3
TARGET_CHARS = {"en": 6400, "zh": 2100}


def _fill(contexts: list[str], pool: list[str], target: int) -> list[str]:
    """`contexts`, then texts from `pool` (in order) until the total reaches `target` chars."""
    out = list(contexts)
    for text in pool:
        if sum(map(len, out)) >= target:
            break
        out.append(text)
    return out


def _sentence(question: str, answer: str) -> str:
    answer = answer.strip().rstrip(".")
    return f"{question.strip().rstrip('?')}? {answer}."


def english(rows: list[dict], pairs: int, group: int, target: int) -> list[dict]:
    out = []
    pool = [r["knowledge"] for r in rows[pairs * group:]]
    for p in range(pairs):
        chunk = rows[p * group:(p + 1) * group]
        if len(chunk) < group:
            break
        pid = f"long-en-{p:02d}"
        contexts = _fill([r["knowledge"] for r in chunk], pool[p * 10:] + pool[:p * 10], target)
        base = {"question": " ".join(r["question"] for r in chunk),
                "contexts": contexts, "pair": pid}
        right = " ".join(_sentence(r["question"], r["right_answer"]) for r in chunk)
        mixed = " ".join(_sentence(r["question"], r["hallucinated_answer"] if i % 2 == 0
                                   else r["right_answer"]) for i, r in enumerate(chunk))
        out.append({**base, "id": pid + "/right", "answer": right, "preferred": True})
        out.append({**base, "id": pid + "/mixed", "answer": mixed, "preferred": False})
    return out


def chinese(rows: list[dict], pairs: int, target: int) -> list[dict]:
    from localeval.text import split_sentences

    out = []
    for p in range(pairs):
        r = rows[p]
        article = (r["newsBeginning"] + r["newsRemainder"]).strip()
        real = r["realContinuation"].strip()
        remainder = r["newsRemainder"].strip()
        after = remainder[remainder.find(real) + len(real):] if real in remainder else remainder
        following = "".join(split_sentences(after)[:FOLLOWING_SENTENCES])
        others = rows[pairs:]
        pool = [(o["newsBeginning"] + o["newsRemainder"]).strip()
                for o in others[p * 10:] + others[:p * 10]]
        pid = f"long-zh-{p:02d}"
        base = {"question": "请续写这篇新闻。", "contexts": _fill([article], pool, target),
                "pair": pid}
        out.append({**base, "id": pid + "/real", "answer": real + following, "preferred": True})
        out.append({**base, "id": pid + "/hallucinated",
                    "answer": r["hallucinatedContinuation"].strip() + following,
                    "preferred": False})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=6, help="pairs per language (default 6)")
    parser.add_argument("--group", type=int, default=4, help="HaluEval rows per English sample")
    parser.add_argument("--scale", type=float, default=1.0,
                        help="context length as a multiple of ~1,600 tokens (default 1)")
    parser.add_argument("--offset", type=int, default=100,
                        help="first dev row used (default 100: away from the pairs of "
                             "localeval meta-eval)")
    parser.add_argument("--only", choices=["en", "zh"], help="one language only")
    parser.add_argument("--data", type=Path,
                        help="the dev files' folder (default ../shared/data/dev)")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    from localeval.errors import DatasetError

    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
    from scripts.provenance.convert import dev_rows

    def load(name: str) -> list[dict]:
        try:
            return dev_rows(name, args.data)[args.offset:]
        except DatasetError as exc:
            sys.exit(f"error: {exc}")

    rows = []
    if args.only != "zh":
        rows += english(load("halueval"), args.pairs, args.group,
                        int(TARGET_CHARS["en"] * args.scale))
    if args.only != "en":
        rows += chinese(load("uhgeval"), args.pairs,
                        int(TARGET_CHARS["zh"] * args.scale))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                        encoding="utf-8")
    chars: dict[str, list[int]] = {}
    for r in rows:
        chars.setdefault(r["id"][5:7], []).append(sum(len(c) for c in r["contexts"]))
    print(json.dumps({"rows": len(rows), "out": str(args.out),
                      "mean_context_chars": {k: round(sum(v) / len(v)) for k, v in
                                             chars.items()}}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
