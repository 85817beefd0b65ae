"""What a claim is judged against: a long material narrowed to the passages that bear on it.

The material reaches this step without its sentences aimed at the evaluator
(support/claims.without_instructions). A 1.5B judge reading a 1,700-token context says "no" to
sentences that stand in it, so material longer than `LONG_WORDS` is narrowed per claim, as
MiniCheck and AlignScore do with chunks (`Index.passages`): its sentences are scored against the
claim with BM25 over content terms (text.terms), the `TOP` best are kept with
`NEIGHBOURS` on each side (a pronoun's antecedent, the sentence a number belongs to), and
overlapping windows merge into passages in document order, up to `MAX_WORDS`. The index is
built once per material, so a claim costs one pass over the sentences. Material still too long
for the judge's window is split into pieces (support/pieces.py).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from localeval.bm25 import BM25
from localeval.text import Sentences, no_space_after, terms, word_count

LONG_WORDS = 350.0
TOP = 3
NEIGHBOURS = 1
MAX_WORDS = 260.0
_K1, _B = 1.2, 0.75


@dataclass
class Index:
    """The sentences of the material (with the text each came from) and their BM25 ranking."""

    sentences: list[tuple[int, str]]
    bm25: BM25

    @classmethod
    def build(cls, material: Sequence[Sentences]) -> Index:
        sentences = [(i, s) for i, text in enumerate(material) for s in text.or_whole]
        return cls(sentences, BM25([t for text in material for t in text.terms], k1=_K1, b=_B))

    def passages(self, claim: str) -> list[str]:
        """The passages (runs of consecutive sentences of one text) that bear on the claim."""
        ranked = self.bm25.ranked(set(terms(claim)))[:TOP]
        keep: set[int] = set()
        words = 0.0
        for i in ranked:
            window = [j for j in range(i - NEIGHBOURS, i + NEIGHBOURS + 1)
                      if 0 <= j < len(self.sentences)
                      and self.sentences[j][0] == self.sentences[i][0] and j not in keep]
            add = sum(word_count(self.sentences[j][1]) for j in window)
            if keep and words + add > MAX_WORDS:
                window = [i] if i not in keep else []
                add = sum(word_count(self.sentences[j][1]) for j in window)
                if not window or words + add > MAX_WORDS:
                    continue
            keep.update(window)
            words += add
        out: list[str] = []
        last: int | None = None
        for j in sorted(keep):
            src, sentence = self.sentences[j]
            if last is not None and j == last + 1 and self.sentences[last][0] == src:
                joiner = "" if no_space_after(out[-1]) else " "
                out[-1] = out[-1] + joiner + sentence
            else:
                out.append(sentence)
            last = j
        return out


def is_long(material: list[str]) -> bool:
    return sum(word_count(t) for t in material) > LONG_WORDS
