"""Build the noise-sensitivity dev set (scripts/provenance/data/noise_dev.jsonl): rows whose
answer is made from a relevant context, an irrelevant one, or neither, each with the class its
claim must get (metrics/claims/matrix.py). Written before anything was tuned on it; report it
apart from what was tuned.

Per base row two contexts: the relevant one (holds the ground truth) and an irrelevant one (the
material of another row, another topic). Four answers per base row, `expect` the class:

- `supported`: the ground truth itself;
- `noise_relevant`: a sentence of the relevant context that is not the ground truth;
- `noise_irrelevant`: a sentence of the irrelevant context;
- `hallucination`: an answer neither context holds (the source set's hallucinated one).

en from HaluEval QA dev (knowledge → relevant context, right_answer → ground truth,
hallucinated_answer), zh from UHGEval dev (newsBeginning + realContinuation → relevant context,
realContinuation's first sentence → ground truth, hallucinatedContinuation).

    python scripts/provenance/build_noise_dev.py [--n 6]
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path
from typing import Any

DEV = Path(__file__).resolve().parents[3] / "shared" / "data" / "dev"
OUT = Path(__file__).with_name("data") / "noise_dev.jsonl"
OTHER = 100
"""The irrelevant context of base row i is the material of row i + OTHER."""


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()
            if line.strip()]


def sentences_en(text: str) -> list[str]:
    parts = re.split(r"(?<=[.!?])(?:\s+|(?=[A-Z\"]))", text.strip())
    return [p.strip() for p in parts if len(p.split()) >= 6]


def sentences_zh(text: str) -> list[str]:
    parts = re.split(r"(?<=[。！？])", text.strip())
    return [p.strip() for p in parts if len(p.strip()) >= 12]


def _rows(base: str, lang: str, question: str, truth: str, relevant: str, irrelevant: str,
          from_relevant: str, from_irrelevant: str, hallucinated: str) -> list[dict[str, Any]]:
    answers = {"supported": truth, "noise_relevant": from_relevant,
               "noise_irrelevant": from_irrelevant, "hallucination": hallucinated}
    return [{"id": f"{base}/{kind}", "language": lang, "question": question, "answer": answer,
             "ground_truth": truth, "contexts": [relevant, irrelevant], "expect": kind}
            for kind, answer in answers.items()]


def _collect(name: str, n: int, make: Any) -> list[dict[str, Any]]:
    """The rows `make(row, other)` builds from the first base rows of a dev file that give
    some, until `n` base rows gave theirs."""
    rows = _jsonl(DEV / name)
    out: list[dict[str, Any]] = []
    i = 0
    while len(out) < 4 * n and i + OTHER < len(rows):
        out += make(rows[i], rows[i + OTHER])
        i += 1
    return out


def en_base(r: dict[str, Any], other: dict[str, Any]) -> list[dict[str, Any]]:
    truth = r["right_answer"].strip()
    own = [s for s in sentences_en(r["knowledge"]) if truth.casefold() not in s.casefold()]
    theirs = sentences_en(other["knowledge"])
    if not own or not theirs or len(truth.split()) > 12:
        return []
    return _rows(r["id"], "en", r["question"], truth, r["knowledge"], other["knowledge"],
                 own[0], theirs[0], r["hallucinated_answer"].strip())


def zh_base(r: dict[str, Any], other: dict[str, Any]) -> list[dict[str, Any]]:
    real = sentences_zh(r["realContinuation"])
    begin = sentences_zh(r["newsBeginning"])
    theirs = sentences_zh(other["newsBeginning"])
    fake = r["hallucinatedContinuation"].strip()
    if not real or not begin or not theirs or not fake:
        return []
    relevant = r["newsBeginning"].strip() + r["realContinuation"].strip()
    question = f"《{r['headLine'].strip()}》这篇新闻接下来报道了什么？"
    return _rows(r["id"], "zh", question, real[0], relevant, other["newsBeginning"].strip(),
                 begin[-1], theirs[0], fake)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=6, help="base rows per language")
    args = ap.parse_args()
    rows = (_collect("halueval_qa_dev.jsonl", args.n, en_base)
            + _collect("uhgeval_dev.jsonl", args.n, zh_base))
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                   encoding="utf-8")
    print(f"{len(rows)} rows → {OUT}")


if __name__ == "__main__":
    main()
