"""Pick what to ask about: chunks for single-chunk drafts, in an order fixed by the seed, and
pairs of chunks that share a subject: two chunks of one document (linked by a rare term both
use, else by the embedder), or of two documents that both name one rare English name. The
embedder alone never links two documents: m3e rates unrelated texts close."""

from __future__ import annotations

import random
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
from pydantic import BaseModel

from localeval.generate.chunking import Chunk
from localeval.generate.lang import LANGUAGES

if TYPE_CHECKING:
    from localeval.generate.subjects import Naming

SAME_SOURCE_BONUS = 0.1
"""Added to the cosine of two chunks of one document: they share a subject."""


class Pair(BaseModel):
    first: str
    second: str
    link: str
    """"entity: TERM" (a rare term both chunks use) or "document: COSINE" (two chunks of one
    document, the closest by the embedder)."""


def seeded_order(chunks: Sequence[Chunk], seed: int) -> list[Chunk]:
    """The chunks in a fixed pseudo-random order: the same ids and seed, the same order."""
    order = sorted(chunks, key=lambda c: c.id)
    random.Random(seed).shuffle(order)
    return order


def terms(chunk: Chunk) -> set[str]:
    """Candidate entities of a chunk: capitalised names (English), runs of three Chinese
    characters (Chinese), and Latin names inside Chinese text."""
    return set().union(*(lang.entities(chunk.text) for lang in LANGUAGES.values()))


def linking_name(term: str) -> bool:
    """A term that names one thing wherever it stands: an English name (capitalised, not a
    common sentence opener). A Chinese run of three characters may be any phrase ("的主要")."""
    return any(lang.links(term) for lang in LANGUAGES.values())


def pick_pairs(chunks: Sequence[Chunk], vectors: np.ndarray, seed: int, count: int,
               *, per_chunk: int = 1) -> list[Pair]:
    """Up to `count` pairs of distinct chunks of one language, each chunk in `per_chunk` pairs
    at most, taken in rounds over the seeded order (a chunk's first pair in the first round):
    a chunk's partner is the chunk sharing its rarest entity (a term at most three chunks use;
    ties by cosine, plus SAME_SOURCE_BONUS within a document) — across documents only an
    English name (`linking_name`) —, else the chunk of its own document nearest by cosine;
    never a pair already taken. `vectors` are the chunks' unit embeddings, in the order of
    `chunks`."""
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
                same = other.source == chunk.source
                shared = [t for t in chunk_terms[i] & chunk_terms[j]
                          if df[t] <= 3 and (same or linking_name(t))]
                raw = float(sims[i, j])
                cos = raw + (SAME_SOURCE_BONUS if same else 0.0)
                if shared:
                    term = min(shared, key=lambda t: (df[t], -len(t), t))
                    key = (-float(df[term]), cos, -j, f"entity: {term}")
                elif same:
                    key = (-1e9, cos, -j, f"document: {raw:.2f}")
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


class Bridge(BaseModel):
    first: str
    second: str
    entity: str
    """The name the first chunk writes and the second chunk's document is about."""


_PAREN = re.compile(r"\s*[(（][^)）]*[)）]\s*$")


def entity_of(naming: Naming) -> str:
    """What a document is about, as another text would name it: its name, else its title,
    less a closing parenthesis ("Heat (1995 film)" → "Heat"); "" when too short to name one
    thing (English under four letters, Chinese under two characters)."""
    name = _PAREN.sub("", naming.name or naming.title).strip()
    spaced = name.isascii()
    return name if len(name) >= (4 if spaced else 2) else ""


def name_forms(name: str) -> list[str]:
    """The forms another text may write a name in, longest first: whole, before its first
    comma ("Robert Dudley" of "Robert Dudley, 1st Earl of Leicester"), without an opening
    "The" ("166th Air Refueling Squadron")."""
    head = re.split(r"[,，]", name)[0].strip()
    forms = {name, head, re.sub(r"^The\s+", "", head)}
    return sorted((f for f in forms if f), key=lambda f: (-len(f), f))


def names_in(text: str, entity: str) -> bool:
    """The text writes the entity: English as whole words, case as written; Chinese as is."""
    if entity.isascii():
        return re.search(rf"(?<![A-Za-z0-9]){re.escape(entity)}(?![A-Za-z0-9])", text) is not None
    return entity in text


def pick_bridges(chunks: Sequence[Chunk], naming: Mapping[str, Naming], seed: int,
                 count: int) -> list[Bridge]:
    """Up to `count` bridges of two chunks of one language and two documents: the first chunk
    writes the entity the second's document is about (`entity_of`: its name or title), the
    second is that document's first chunk (where a page says what its subject is). In seeded
    order of the first chunk; each (first chunk, document) once."""
    heads: dict[str, Chunk] = {}
    for c in chunks:
        heads.setdefault(c.source, c)
    entities = {src: e for src in heads if src in naming
                if (e := entity_of(naming[src]))}
    out: list[Bridge] = []
    for chunk in seeded_order(chunks, seed):
        for src, entity in sorted(entities.items()):
            head = heads[src]
            if src != chunk.source and head.language == chunk.language and \
                    names_in(chunk.text, entity):
                out.append(Bridge(first=chunk.id, second=head.id, entity=entity))
                if len(out) >= count:
                    return out
    return out
