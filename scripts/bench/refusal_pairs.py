"""Refusal dev pairs: on each pair the first answer declines to answer and the second answers,
so the refusal metric should score the first higher (the frame benches' `good` side).

No dev set in ../shared/data/dev labels refusals, so these pairs are made from dev rows (the
report half: from row 20 on) and fixed wordings, all written before any refusal frame was
measured on them:
- the questions and answers: HaluEval QA (en; `question`, `right_answer`,
  `hallucinated_answer`) and HalluQA (zh; `Question`, `Best Answer1`, `Wrong_Answer1`), skipping
  the HalluQA rows whose best answer is itself a non-answer (a premise denied, "no accepted
  answer": whether that is a refusal is the criterion's grey zone, not a clear case);
- the refusals: research/refusals_heldout.tsv (honest refusals written for the shield's head),
  less its opinion-style lines ("there is no single answer"), one per question in file order;
- the answering side by kind, cycling over the questions: `right` (the right answer), `wrong`
  (the hallucinated one: wrong is no refusal), `hedged` (the right answer under a hedge, one of
  four wordings per language: a hedged answer is no refusal), `topical` (the refusal names the
  question: "The provided passages do not answer the question "…".", against the right answer).

    from scripts.bench.refusal_pairs import pairs
    pairs("en")  # 17 pairs (one per refusal), kinds in turn
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from localeval.data.dataset import Sample

HERE = Path(__file__).resolve()
REFUSALS = HERE.parents[2] / "research" / "refusals_heldout.tsv"
KINDS = ("right", "wrong", "hedged", "topical")
START = 20
"""The report half of the dev files (scripts/provenance/dev_sets.py --n 20 fits on the rows
before)."""

OPINION = re.compile(r"depends on what you mean|no generally accepted|Opinions differ|"
                     r"定义会有所不同|没有公认|看法不同")
NON_ANSWER = re.compile(r"无法|没有(被)?公认|不同的看法|没有确切|混淆|不一定")
HEDGES = {
    "en": ("I'm not completely sure, but I think {a}.", "I might be wrong, but it seems to be {a}.",
           "As far as I can tell, {a}.", "Probably {a}, though I can't be certain."),
    "zh": ("我不太确定，不过{a}。", "我不能完全肯定，但{a}。", "据我所知，{a}。",
           "{a}。不过我没有十足的把握。"),
}
TOPICAL = {"en": 'The provided passages do not answer the question "{q}".',
           "zh": "提供的资料没有回答“{q}”这个问题。"}


@dataclass
class RefusalPair:
    pair_id: str
    kind: str
    good: Sample
    """The refusal."""
    bad: Sample
    """The answer."""


def refusals(lang: str) -> list[str]:
    out = []
    for line in REFUSALS.read_text(encoding="utf-8").splitlines():
        _, language, _, text = line.split("\t", 3)
        if language == lang and not OPINION.search(text):
            out.append(text.strip())
    return out


def _rows(lang: str, src: Path | None) -> list[tuple[str, str, str, str]]:
    """(id, question, right answer, wrong answer) of the report half."""
    from scripts.provenance.convert import dev_rows

    if lang == "en":
        return [(r["id"], r["question"].strip(), r["right_answer"].strip(),
                 r["hallucinated_answer"].strip()) for r in dev_rows("halueval", src)[START:]]
    return [(r["id"], r["Question"].strip(), r["Best Answer1"].strip(),
             r["Wrong_Answer1"].strip()) for r in dev_rows("halluqa", src)[START:]
            if not NON_ANSWER.search(r["Best Answer1"])]


def hedge(lang: str, answer: str, i: int) -> str:
    core = answer.rstrip("。.！!")
    if lang == "en" and core[:1].isupper() and not core.split()[0].istitle():
        core = core[0].lower() + core[1:]
    return HEDGES[lang][i % len(HEDGES[lang])].format(a=core)


def pairs(lang: str, src: Path | None = None) -> list[RefusalPair]:
    """The pairs of one language: as many as there are refusals, kinds cycling."""
    said = refusals(lang)
    out = []
    for i, ((rid, q, right, wrong), refusal) in enumerate(zip(_rows(lang, src), said,
                                                              strict=False)):
        kind = KINDS[i % len(KINDS)]
        if kind == "topical":
            refusal = TOPICAL[lang].format(q=q.rstrip("?？ "))
        answer = {"right": right, "wrong": wrong, "hedged": hedge(lang, right, i // 4),
                  "topical": right}[kind]
        pid = f"{rid}/{kind}"
        out.append(RefusalPair(pid, kind, Sample(id=f"{pid}/good", question=q, answer=refusal),
                               Sample(id=f"{pid}/bad", question=q, answer=answer)))
    return out
