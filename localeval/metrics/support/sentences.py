"""A text split once: its sentences and their match keys, shared by every support step.

The claims of an answer, the quotes looked up in the contexts, the passages of a long context,
the closest sentence shown to the reader and the pieces of a material too long for the window
all need the same texts cut into sentences (text.split_sentences) and, for comparisons, each
sentence's `text.match_key`. `split(text)` returns that structure, `Sentences`, computed once
per text and kept for the last `KEPT` texts, so a sample's answer and contexts are split once
whatever number of steps and metrics ask.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from localeval.text import match_key, split_sentences

KEPT = 64
"""Texts whose split is kept (a sample's answer, ground truth and contexts, several samples)."""


@dataclass(frozen=True)
class Sentences:
    """A text's sentences (text.split_sentences, deterministic) and their match keys."""

    text: str
    items: tuple[str, ...]
    keys: tuple[str, ...] = field(repr=False)

    @property
    def or_whole(self) -> tuple[str, ...]:
        """The sentences, or the text itself when it has none (a blank or a bare fragment)."""
        return self.items or (self.text,)


@functools.lru_cache(maxsize=KEPT)
def split(text: str) -> Sentences:
    items = tuple(split_sentences(text))
    return Sentences(text, items, tuple(match_key(s) for s in items))
