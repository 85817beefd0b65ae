"""Okapi BM25 over bags of content terms (text.ranking_terms): the evidence step ranks a long
context's sentences for a claim with it (metrics/claims/evidence.py), the generator the
chunks of a corpus for a question (generate/tasks.py)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence


class BM25:
    """BM25 (k1, b) over `bags`, each a text's terms with their repeats; a query is a set of
    terms (its repeats do not count)."""

    def __init__(self, bags: Sequence[Sequence[str]], *, k1: float, b: float = 0.75) -> None:
        self.k1, self.b = k1, b
        self.counts = [Counter(bag) for bag in bags]
        df: Counter[str] = Counter()
        for c in self.counts:
            df.update(c.keys())
        n = max(1, len(self.counts))
        self.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}
        self.avg_len = sum(sum(c.values()) for c in self.counts) / n or 1.0

    def scores(self, query: set[str]) -> list[float]:
        out = []
        for c in self.counts:
            length = sum(c.values())
            s = 0.0
            for t in query & c.keys():
                tf = c[t]
                norm = self.k1 * (1 - self.b + self.b * length / self.avg_len)
                s += self.idf[t] * tf * (self.k1 + 1) / (tf + norm)
            out.append(s)
        return out

    def ranked(self, query: set[str]) -> list[int]:
        """Every bag's index, best first (ties: the earlier first)."""
        return _best_first(self.scores(query))

    def top(self, query: set[str], k: int) -> list[int]:
        """The indices of the k best bags that share a term with the query, best first."""
        scores = self.scores(query)
        return [i for i in _best_first(scores)[:k] if scores[i] > 0]


def _best_first(scores: list[float]) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))
