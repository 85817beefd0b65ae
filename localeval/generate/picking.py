"""Pick what to ask about: chunks for single-chunk drafts, in an order fixed by the seed, and
pairs of chunks linked by a shared rare term (an entity) or, failing that, by the embedder."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Sequence

import numpy as np
from pydantic import BaseModel

from localeval.generate.chunking import Chunk

_CAPITAL = re.compile(r"\b[A-Z][A-Za-z]{2,}(?:[ -][A-Z][A-Za-z]+)*")
_EN_COMMON = {"The", "This", "That", "These", "Those", "There", "Their", "They", "When", "What",
              "Which", "While", "With", "After", "Before", "During", "From", "Since", "Many",
              "Most", "Some", "Each", "Every", "Its", "His", "Her", "For", "But", "And", "Today",
              "Unlike", "Although", "Because", "However", "Other", "One", "Two", "Three"}
_ZH_NUMERALS = set("零〇一二三四五六七八九十百千万亿两年月日个")
SAME_SOURCE_BONUS = 0.1
"""Added to the cosine of two chunks of one document: they share a subject."""
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]{3,}")


class Pair(BaseModel):
    first: str
    second: str
    link: str
    """"entity: TERM" (a rare term both chunks use) or "embedder: COSINE"."""


def seeded_order(chunks: Sequence[Chunk], seed: int) -> list[Chunk]:
    """The chunks in a fixed pseudo-random order: the same ids and seed, the same order."""
    order = sorted(chunks, key=lambda c: c.id)
    random.Random(seed).shuffle(order)
    return order


def terms(chunk: Chunk) -> set[str]:
    """Candidate entities of a chunk: capitalised names (English), runs of three Chinese
    characters (Chinese), and Latin names inside Chinese text."""
    found = {m.group(0) for m in _CAPITAL.finditer(chunk.text)} - _EN_COMMON
    for run in _CJK_RUN.findall(chunk.text):
        found.update(g for g in (run[i:i + 3] for i in range(len(run) - 2))
                     if not any(ch in _ZH_NUMERALS for ch in g))
    return found


def pick_pairs(chunks: Sequence[Chunk], vectors: np.ndarray, seed: int, count: int,
               *, min_cosine: float = 0.3, per_chunk: int = 1) -> list[Pair]:
    """Up to `count` pairs of distinct chunks of one language, each chunk in `per_chunk` pairs
    at most, taken in rounds over the seeded order (a chunk's first pair in the first round):
    a chunk's partner is the chunk sharing its rarest entity (a term at most three chunks use;
    ties by cosine), else its nearest chunk by cosine (plus SAME_SOURCE_BONUS within a
    document), if ≥ min_cosine; never a pair already taken.
    `vectors` are the chunks' unit embeddings, in the order of `chunks`."""
    index = {c.id: i for i, c in enumerate(chunks)}
    chunk_terms = [terms(c) for c in chunks]
    df = Counter(t for ts in chunk_terms for t in ts)
    uses: Counter[str] = Counter()
    taken: set[tuple[str, str]] = set()
    pairs: list[Pair] = []
    sims = vectors @ vectors.T if len(chunks) else np.zeros((0, 0))
    order = seeded_order(chunks, seed)
    for _ in range(per_chunk):
        for chunk in order:
            if len(pairs) >= count:
                return pairs
            if uses[chunk.id] >= per_chunk:
                continue
            i = index[chunk.id]
            best: tuple[float, float, int, str] | None = None  # (rarity, cosine, j, link)
            for j, other in enumerate(chunks):
                if j == i or uses[other.id] >= per_chunk or other.language != chunk.language \
                        or tuple(sorted((chunk.id, other.id))) in taken:
                    continue
                shared = [t for t in chunk_terms[i] & chunk_terms[j] if df[t] <= 3]
                raw = float(sims[i, j])
                cos = raw + (SAME_SOURCE_BONUS if other.source == chunk.source else 0.0)
                if shared:
                    term = min(shared, key=lambda t: (df[t], -len(t), t))
                    key = (-float(df[term]), cos, -j, f"entity: {term}")
                elif cos >= min_cosine:
                    key = (-1e9, cos, -j, f"embedder: {raw:.2f}")
                else:
                    continue
                if best is None or key[:3] > best[:3]:
                    best = key
            if best is None:
                continue
            other = chunks[-best[2]]
            uses.update((chunk.id, other.id))
            first, second = sorted((chunk, other), key=lambda c: c.id)
            taken.add((first.id, second.id))
            pairs.append(Pair(first=first.id, second=second.id, link=best[3]))
    return pairs
