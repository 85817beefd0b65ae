"""A text cut into sentences once: the structure every support step receives.

The claims of an answer, the quotes looked up in the contexts, the passages of a long context,
the closest sentence shown to the reader and the pieces of a material too long for the window
all need the same texts cut into sentences (text.split_sentences), and for comparisons each
sentence's `text.match_key` and content terms (text.terms). `split(text)` builds that
structure, `Sentences`, once per sample's text (the last `KEPT` are kept, so the metrics of one
sample share them); the steps are handed it (`split_all` for a material) and never split again.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass, field

from localeval.text import match_key, split_sentences, terms

KEPT = 64
"""Texts whose split is kept (a sample's answer, ground truth and contexts, several samples)."""


@dataclass(frozen=True, eq=False)
class Sentences:
    """A text's sentences (text.split_sentences, deterministic) and their match keys; equal
    only to itself (a sample's text is split once)."""

    text: str
    items: tuple[str, ...]
    keys: tuple[str, ...] = field(repr=False)

    @property
    def or_whole(self) -> tuple[str, ...]:
        """The sentences, or the text itself when it has none (a blank or a bare fragment)."""
        return self.items or (self.text,)

    @functools.cached_property
    def terms(self) -> tuple[list[str], ...]:
        """The content terms (text.terms, a bag) of each of `or_whole`."""
        return tuple(terms(s) for s in self.or_whole)


@functools.lru_cache(maxsize=KEPT)
def split(text: str) -> Sentences:
    items = tuple(split_sentences(text))
    return Sentences(text, items, tuple(map(match_key, items)))


def split_all(texts: Iterable[str]) -> tuple[Sentences, ...]:
    """A material (a list of texts), each text split."""
    return tuple(split(t) for t in texts)
