"""Dev pairs for the context metrics: on each pair the first sample's one context is the row's
own passage and the second's is a near miss, so context_precision, context_recall and
context_relevance should score the first higher (the frame benches' `good` side).

No dev set in ../shared/data/dev ranks retrieved passages, so these pairs are made from dev rows
(the report half: from row 20 on), written before any context template was measured on them:
- en: HaluEval QA (`question`, `knowledge` the row's passage, `right_answer` as both the answer
  and the ground truth);
- zh: HalluQA (`Question`, `Source` the row's passage, `Best Answer1` the answer, `Best
  Answer2` the ground truth);
- the near miss: the passage of another row of the same file (any row, both halves) that BM25
  over the passages' content terms (localeval.bm25, text.ranking_terms) ranks first for the
  question, so that it shares the question's words without being written for it. A row whose
  best other passage shares no term with the question is skipped (the pair would be trivial),
  and so is a row whose own passage shares none (HalluQA's "这是一个主观性问题，每个人都有不同的
  看法。", the Source of many questions: it says nothing the near miss does not, so the pair
  has no right order).

    from scripts.bench.context_pairs import pairs
    pairs("en")  # one pair per row from row 20 on

`pairs(lang, src, split="fit")` gives the same construction on rows that are never reported, to
fit on (context_precision's τ: scripts/provenance/fit_step_threshold.py): en, the first
FIT_ROWS rows of HaluEval QA's train split (near misses among its first POOL_ROWS passages, the
size of the dev file); zh, HalluQA's dev rows before START (no zh train split has questions with
their passages; those rows are the fit half every zh τ was fitted on).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from localeval.bm25 import BM25
from localeval.data.dataset import Sample
from localeval.text import ranking_terms

START = 20
"""The report half of the dev files (scripts/provenance/dev_sets.py --n 20 fits on the rows
before)."""
K1 = 1.2
FIT_ROWS = 40
"""en fit pairs: the first rows of HaluEval QA's train split."""
POOL_ROWS = 200
"""en fit pairs: the train passages a near miss is drawn from (as many as the dev file has)."""

FIELDS = {
    "en": ("halueval", "question", "knowledge", "right_answer", "right_answer"),
    "zh": ("halluqa", "Question", "Source", "Best Answer1", "Best Answer2"),
}
"""Language → (dev file, question, passage, answer, ground truth fields)."""


@dataclass
class ContextPair:
    pair_id: str
    good: Sample
    """The row with its own passage."""
    bad: Sample
    """The row with the near miss."""
    near_miss_of: str
    """The id of the row whose passage is the near miss."""


def rows(lang: str, src: Path | None) -> list[dict[str, Any]]:
    from scripts.provenance.convert import dev_rows

    name, q, c, a, g = FIELDS[lang]
    return [{"id": str(r["id"]), "question": r[q], "context": r[c], "answer": r[a],
             "ground_truth": r[g]} for r in dev_rows(name, src)]


def train_rows(src: Path | None) -> list[dict[str, Any]]:
    """The first POOL_ROWS rows of HaluEval QA's train split, beside the dev folder `src`."""
    from scripts.provenance.convert import default_src

    path = Path(src or default_src()).parent / "train" / "halueval_qa_train.jsonl"
    out = []
    with path.open(encoding="utf-8") as f:
        for line in f:
            if len(out) == POOL_ROWS:
                break
            r = json.loads(line)
            out.append({"id": f"halueval-qa-train-{r['row']}", "question": r["question"],
                        "context": r["knowledge"], "answer": r["right_answer"],
                        "ground_truth": r["right_answer"]})
    return out


def near_miss(all_rows: list[dict[str, Any]], bm25: BM25, i: int) -> int | None:
    """The index of the best other passage for row i's question (a different text), or None
    when no other passage, or the row's own, shares a content term with it."""
    own = all_rows[i]["context"]
    query = set(ranking_terms(all_rows[i]["question"]))
    if not query & set(ranking_terms(own)):
        return None
    return next((j for j in bm25.top(query, 5) if j != i and all_rows[j]["context"] != own), None)


def pairs(lang: str, src: Path | None = None,
          split: Literal["report", "fit"] = "report") -> list[ContextPair]:
    if split == "fit" and lang == "en":
        all_rows, chosen = train_rows(src), range(FIT_ROWS)
    else:
        all_rows = rows(lang, src)
        chosen = range(START, len(all_rows)) if split == "report" else range(START)
    bm25 = BM25([ranking_terms(r["context"]) for r in all_rows], k1=K1)
    out = []
    for i in chosen:
        j = near_miss(all_rows, bm25, i)
        if j is None:
            continue
        r = all_rows[i]
        base = {"question": r["question"], "answer": r["answer"], "ground_truth": r["ground_truth"]}
        out.append(ContextPair(
            r["id"], Sample(id=f"{r['id']}/good", contexts=[r["context"]], **base),
            Sample(id=f"{r['id']}/bad", contexts=[all_rows[j]["context"]], **base),
            all_rows[j]["id"]))
    return out
