"""A plain BM25 over a language's chunks (text.terms: word stems and Chinese bigrams), to find
the chunks of the whole corpus an "unanswerable" question might be answered by, beside the
embedder's nearest: a word the question shares with a chunk finds it where m3e's cosines, all
high, do not."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from localeval.text import terms

K1 = 1.5
B = 0.75


class BM25:
    """Okapi BM25 (k1 = K1, b = B) over `texts`; `top` ranks them for a query (ties: earlier)."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.tf = [Counter(terms(t)) for t in texts]
        self.len = [sum(tf.values()) for tf in self.tf]
        self.avg = (sum(self.len) / len(self.len)) if self.len else 1.0
        df = Counter(t for tf in self.tf for t in tf)
        n = len(self.tf)
        self.idf = {t: math.log(1 + (n - f + 0.5) / (f + 0.5)) for t, f in df.items()}

    def scores(self, query: str) -> list[float]:
        q = terms(query)
        out = []
        for tf, size in zip(self.tf, self.len, strict=True):
            norm = K1 * (1 - B + B * size / (self.avg or 1.0))
            out.append(sum(self.idf[t] * tf[t] * (K1 + 1) / (tf[t] + norm)
                           for t in q if tf.get(t)))
        return out

    def top(self, query: str, k: int) -> list[int]:
        """The indices of the k best texts with a score above 0, best first."""
        scores = self.scores(query)
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
        return [i for i in order[:k] if scores[i] > 0]
