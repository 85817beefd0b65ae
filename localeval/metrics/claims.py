"""A text's claims judged against material: the shared body of faithfulness and context_recall.

Two kinds of sentence are settled mechanically, before any request, and cost no token:
- a **question** (it ends in "?" or "？") claims nothing: it gets no statement and is listed in
  `no_claim` (by sentence number);
- a sentence **quoted** from the material (its `match_key` form, punctuation and spaces removed,
  is found in one of the material's texts) is supported: the material says it, word for word.
  It is its own statement, with verdict 1, `quoted: true`, and P(support) 1. Only a whole
  sentence counts (at least `MIN_QUOTE_WORDS` words, ending in . 。 ! ！ ; ；): a fragment such
  as a title that answers the question claims something only with the question, and the
  material holding the title does not make it the answer.

Every other sentence gets anchored statements (metrics/statements.py) and a verdict each
(metrics/chunking.py). Measured on the long dev set (docs/metrics.md, *Long answers*), the
mechanical cases removed most generated tokens there; the 1.5B judge had also called verbatim
sentences of a 1,600-token context unsupported.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from localeval.metrics.base import MetricContext
from localeval.metrics.chunking import support_verdicts
from localeval.metrics.statements import anchored_statements
from localeval.text import match_key, split_sentences, word_count

MIN_QUOTE_WORDS = 10.0
"""Shortest quoted sentence: 10 words (15 Chinese characters; text.word_count)."""
_CLOSERS = r"[\"'”’」』）)\]]*$"
_QUESTION = re.compile(r"[?？]" + _CLOSERS)
_STATEMENT_END = re.compile(r"[.。!！;；]" + _CLOSERS)


def is_question(sentence: str) -> bool:
    return bool(_QUESTION.search(sentence.strip()))


def quoted_in(sentence: str, material: list[str]) -> bool:
    """The sentence, punctuation and spaces aside, is part of one of the material's texts."""
    if word_count(sentence) < MIN_QUOTE_WORDS or not _STATEMENT_END.search(sentence.strip()):
        return False
    key = match_key(sentence)
    return bool(key) and any(key in match_key(text) for text in material)


@dataclass
class Claims:
    """Per statement (in sentence order) its text, sentence number and verdict entry; the
    sentences that claim nothing; pieces of the material and retried requests."""

    sentences: list[str]
    statements: list[dict[str, Any]] = field(default_factory=list)
    no_claim: list[int] = field(default_factory=list)
    pieces: int = 1
    retries: int = 0

    @property
    def supported(self) -> int:
        return sum(s["verdict"] for s in self.statements)

    @property
    def p_supported(self) -> float | None:
        """Summed probability of support (None when the judge gave none for some statement)."""
        probs = [s.get("p_supported") for s in self.statements]
        return None if any(p is None for p in probs) else sum(probs)  # type: ignore[arg-type]

    def details(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sentences": self.sentences, "statements": self.statements}
        if self.no_claim:
            out["no_claim"] = self.no_claim
        if self.pieces > 1:
            out["context_pieces"] = self.pieces
        if self.retries:
            out["judge_retries"] = self.retries
        return out


async def judge_claims(ctx: MetricContext, step: str, text: str, question: str | None,
                       material: list[str], material_name: str = "context") -> Claims:
    """The statements of `text`, each with its verdict against `material` (the contexts)."""
    sentences = split_sentences(text)
    claims = Claims(sentences=sentences)
    quoted: dict[int, str] = {}
    for i, sentence in enumerate(sentences):
        if is_question(sentence):
            claims.no_claim.append(i + 1)
        elif quoted_in(sentence, material):
            quoted[i] = sentence
    skip = {n - 1 for n in claims.no_claim} | set(quoted)
    found = await anchored_statements(ctx, text, question, skip=skip)
    entries: list[tuple[int, dict[str, Any]]] = [
        (i + 1, {"statement": s, "sentence": i + 1, "verdict": 1, "quoted": True,
                 "reason": f"quoted from the {material_name}", "p_supported": 1.0})
        for i, s in quoted.items()]
    if found.items:
        support = await support_verdicts(ctx, step, found.texts, split="contexts",
                                         contexts=material, question=question,
                                         material_name=material_name)
        entries += [(a.sentence, {"statement": a.statement, "sentence": a.sentence, **v})
                    for a, v in zip(found.items, support.verdicts, strict=True)]
        claims.pieces, claims.retries = support.pieces, found.retries + support.retries
    claims.statements = [e for _, e in sorted(entries, key=lambda x: x[0])]
    return claims
