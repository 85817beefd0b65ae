"""The coverage plan: how many rows of each kind each document is to get, so that a test set
covers its corpus. Rows go to the languages present in proportion to their chunks (each
language at least one while --n allows), then within a language to its documents in
proportion to their chunks (each document at least one while its language's share allows):
`quotas`. assemble keeps rows by this plan (a document short of candidates gives its places to
the others, the fewest kept per chunk first), and `surplus` is what the plan has no place for.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TypeVar

from localeval.generate.chunking import Chunk

Doc = tuple[str, str]
"""A document as the plan counts it: (source, language)."""
K = TypeVar("K")
"""What `share` shares places over: a language, or a document."""


def doc_chunks(corpus: Sequence[Chunk], min_tokens: int) -> dict[Doc, int]:
    """Per document the chunks a question may be asked of (`min_tokens` or more), in corpus
    order; a document with none is left out."""
    return dict(Counter((c.source, c.language) for c in corpus if c.tokens >= min_tokens))


def quotas(docs: dict[Doc, int], n: int) -> dict[Doc, int]:
    """Per document the rows of one kind it is planned to get (they sum to n): the languages'
    shares first (`share`), then each language's documents'."""
    by_lang: dict[str, dict[Doc, int]] = {}
    for doc, chunks in docs.items():
        by_lang.setdefault(doc[1], {})[doc] = chunks
    langs = share({lang: sum(d.values()) for lang, d in by_lang.items()}, n)
    out: dict[Doc, int] = {}
    for lang, mine in by_lang.items():
        out |= share(mine, langs.get(lang, 0))
    return out


def share(weights: Mapping[K, int], total: int) -> dict[K, int]:
    """`total` places over the keys of `weights` (chunk counts): one each first while there
    are places (the heaviest first; ties in key order), the rest in proportion to the weights
    by largest remainder (ties: the heavier, then key order)."""
    keys = sorted(weights, key=lambda k: (-weights[k], k))
    if total <= len(keys):
        return {k: int(i < total) for i, k in enumerate(keys)}
    out = dict.fromkeys(keys, 1)
    rest = total - len(keys)
    whole = sum(weights.values()) or 1
    exact = {k: rest * weights[k] / whole for k in keys}
    for k in keys:
        out[k] += int(exact[k])
    left = total - sum(out.values())
    for k in sorted(keys, key=lambda k: (-(exact[k] - int(exact[k])), -weights[k], k))[:left]:
        out[k] += 1
    return out
