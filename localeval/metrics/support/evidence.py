"""What a claim is judged against: a long material narrowed to the passages that bear on it.

The material reaches this step whole: nothing is deleted from a context (an instruction in it
is fenced and flagged, metrics/shield.py). A 1.5B judge reading a 1,700-token context says "no" to
sentences that stand in it, so material longer than `LONG_WORDS` is narrowed per claim, as
MiniCheck and AlignScore do with chunks (`Index.passages`): its sentences are scored against the
claim with BM25 over content terms (text.terms), the `TOP` best are kept with
`NEIGHBOURS` on each side (a pronoun's antecedent, the sentence a number belongs to), and
overlapping windows merge into passages in document order, up to `MAX_WORDS`. A passage
carries its **frame**: the first sentence of its text and the nearest heading or lead-in before
it ("Myths", "The following claims are false:"; `is_heading`), written before it with " … "
when the window does not hold them — a denial, a heading or a list's lead-in travels with every
window cut from its section. The index is
built once per material, so a claim costs one pass over the sentences. Material still too long
for the judge's window is split into pieces (support/pieces.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from localeval.bm25 import BM25
from localeval.text import Sentences, no_space_after, terms, word_count

LONG_WORDS = 350.0
TOP = 3
NEIGHBOURS = 1
MAX_WORDS = 260.0
_K1, _B = 1.2, 0.75
HEADING_WORDS = 12.0
"""Longest sentence without end punctuation read as a heading (`is_heading`)."""
FRAME_GAP = " … "
"""What stands between a passage's frame and the passage."""
_LEAD_IN = re.compile(r"[:：]\s*$")
_ENDED = re.compile(r"[.!?。！？;；…\"'”’」』)）\]]\s*$")


def is_heading(sentence: str) -> bool:
    """A heading ("Popular myths", "## History") or a lead-in ending in a colon ("The
    following claims are false:"): the frame of the sentences after it."""
    s = sentence.strip()
    return bool(_LEAD_IN.search(s)) or (bool(s) and not _ENDED.search(s)
                                        and word_count(s) <= HEADING_WORDS)


@dataclass
class Index:
    """The sentences of the material (with the text each came from) and their BM25 ranking."""

    sentences: list[tuple[int, str]]
    bm25: BM25
    frames: list[list[int]] = field(default_factory=list)
    """Per sentence, its frame (indices into `sentences`, in order): its text's first sentence
    and the nearest heading or lead-in before it."""

    @classmethod
    def build(cls, material: Sequence[Sentences]) -> Index:
        sentences = [(i, s) for i, text in enumerate(material) for s in text.or_whole]
        frames: list[list[int]] = []
        first, heading, src = 0, None, -1
        for j, (i, sentence) in enumerate(sentences):
            if i != src:
                first, heading, src = j, None, i
            frames.append(sorted({first} | ({heading} if heading is not None else set())))
            if j != first and is_heading(sentence):
                heading = j
        return cls(sentences, BM25([t for text in material for t in text.terms], k1=_K1, b=_B),
                   frames)

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
        runs: list[list[int]] = []
        for j in sorted(keep):
            if runs and j == runs[-1][-1] + 1 and self.sentences[j - 1][0] == self.sentences[j][0]:
                runs[-1].append(j)
            else:
                runs.append([j])
        return [self._framed(run) for run in runs]

    def _join(self, indices: list[int]) -> str:
        out = ""
        for j in indices:
            sentence = self.sentences[j][1]
            out = sentence if not out else out + ("" if no_space_after(out) else " ") + sentence
        return out

    def _framed(self, run: list[int]) -> str:
        """A run of consecutive sentences, after its frame when the run does not hold it."""
        frame = [f for f in self.frames[run[0]] if f < run[0]] if self.frames else []
        while frame and frame[-1] == run[0] - 1:  # right before the run: one text with it
            run = [frame.pop(), *run]
        if not frame:
            return self._join(run)
        return self._join(frame) + FRAME_GAP + self._join(run)


def is_long(material: list[str]) -> bool:
    return sum(word_count(t) for t in material) > LONG_WORDS
