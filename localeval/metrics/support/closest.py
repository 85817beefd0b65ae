"""The material's sentence closest to an item: the one sharing the most character trigrams of
the `text.match_key` form (the first such sentence; None when no sentence shares one).

Comparing the item's trigram set with every sentence's took 1.5-2 s per item against a 1 MB
context, on the event loop. `SentenceIndex` encodes every trigram of the material once as an
integer (three code points of 21 bits), sorted with its sentence number; an item then looks up
its own trigrams (binary search) and counts, per sentence, the distinct trigrams it shares.
Same results as the set comparison (tests/test_closest_sentence.py keeps it as reference).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import numpy as np

from localeval.text import Sentences, match_key

_BITS = 21  # every code point (up to U+10FFFF) fits in 21 bits


def _codes(key: str) -> np.ndarray:
    """The code points of a match key (lone surrogates included)."""
    return np.frombuffer(key.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(
        np.int64
    )


def _short_code(key: str) -> int:
    """A key of under 3 characters is its own single "trigram" (see `grams`): coded as
    a negative number, so it equals only the same short key."""
    c = [*_codes(key).tolist(), 0, 0]
    return -1 - (len(key) | c[0] << 2 | c[1] << (2 + _BITS))


def _trigram_codes(codes: np.ndarray) -> np.ndarray:
    return codes[:-2] << (2 * _BITS) | codes[1:-1] << _BITS | codes[2:]


def grams(text: str) -> set[str]:
    """Character trigrams of the text's match_key form (for closeness in any script)."""
    key = match_key(text)
    return {key[i:i + 3] for i in range(max(1, len(key) - 2))}


def item_codes(item: str) -> np.ndarray:
    """The distinct trigram codes of a text (`grams` as integers)."""
    key = match_key(item)
    if len(key) < 3:
        return np.array([_short_code(key)], dtype=np.int64)
    return np.unique(_trigram_codes(_codes(key)))


class SentenceIndex:
    """Every (trigram, sentence) pair of a material once, sorted by trigram code."""

    def __init__(self, material: Sequence[Sentences]) -> None:
        self.sentences: list[str] = []
        keys: list[str] = []
        for text in material:
            self.sentences += text.or_whole
            keys += text.keys if text.items else (match_key(text.text),)
        lengths = np.array([len(k) for k in keys], dtype=np.int64)
        ends = np.cumsum(lengths)
        codes = _codes("".join(keys))
        sentence = np.repeat(np.arange(len(keys), dtype=np.int64), lengths)
        if len(codes) >= 3:  # a trigram starting at p lies within its sentence
            tri, owner = _trigram_codes(codes), sentence[:-2]
            keep = np.arange(len(tri)) + 2 < ends[owner]
            tri, owner = tri[keep], owner[keep]
        else:
            tri = owner = np.zeros(0, dtype=np.int64)
        short = [(i, _short_code(k)) for i, k in enumerate(keys) if len(k) < 3]
        if short:
            tri = np.concatenate([tri, np.array([c for _, c in short], dtype=np.int64)])
            owner = np.concatenate([owner, np.array([i for i, _ in short], dtype=np.int64)])
        order = np.lexsort((owner, tri))
        tri, owner = tri[order], owner[order]
        first = np.ones(len(tri), dtype=bool)  # one pair per (trigram, sentence)
        first[1:] = (tri[1:] != tri[:-1]) | (owner[1:] != owner[:-1])
        self.codes, self.owners = tri[first], owner[first].astype(np.int32)

    def closest(self, item: str) -> str | None:
        wanted = item_codes(item)
        lo = np.searchsorted(self.codes, wanted, side="left")
        hi = np.searchsorted(self.codes, wanted, side="right")
        hit = hi > lo
        if not hit.any():
            return None
        owners = np.concatenate([self.owners[a:b] for a, b in zip(lo[hit], hi[hit], strict=True)])
        shared = np.bincount(owners, minlength=len(self.sentences))
        return self.sentences[int(shared.argmax())]  # the first of the best, as before


def closest_sentence(item: str, material: Sequence[Sentences]) -> str | None:
    """The material's sentence sharing the most character trigrams with the item. The index of
    the last few materials is kept, so a sample's items share one."""
    return _index(tuple(material)).closest(item)


@functools.lru_cache(maxsize=8)
def _index(material: tuple[Sentences, ...]) -> SentenceIndex:
    return SentenceIndex(material)
