"""rerank_relevancy(q, C): the judge rates each context's relevance to the question on 0–3
(0 irrelevant, 1 related but not useful, 2 partly answers, 3 answers it), normalised to [0, 1].

rerank_relevancy = mean over contexts; rerank_relevancy.max = the best context's rating. Both
also as `.greedy` (the same figures: the greedy ratings) and `.weighted` (each rating replaced
by the judge's expected rating, Σ P(r)·r / 3 over the four ratings, when the judge gives
probabilities). A context too long for the window is split; its rating is the best piece's.
"""

from __future__ import annotations

from typing import Any

from localeval.data.dataset import Sample
from localeval.judge.schemas import rating
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.claims.evidence import Asked, ask_pieces
from localeval.metrics.claims.score import nonempty
from localeval.metrics.rubric import level_probs
from localeval.names import GREEDY, WEIGHTED

NAME = "rerank_relevancy"
SCALE = 3
RATINGS = (0, 1, 2, 3)


@metric(NAME, requires=("question", "contexts"), steps=("rerank_relevancy_rating",),
        order=90,
        examples={"rerank_relevancy_rating": lambda ex: {"question": ex.question,
                                                         "context": ex.contexts[:1]}},
        description="the judge's 0–3 relevance rating of each context to the question, "
                    "normalised; mean (and max)")
async def rerank_relevancy(sample: Sample, ctx: MetricContext) -> MetricResult:
    contexts = nonempty(sample.contexts)
    if not contexts:
        return MetricResult.unscored(NAME, "every context is empty")
    per_context = []
    for context in contexts:
        answers = await ask_pieces(ctx, "rerank_relevancy_rating", rating(ctx.settings.explain),
                                   split="context", probe=["rating"], question=sample.question,
                                   context=[context])
        per_context.append(_entry(answers))
    scores: dict[str, float] = {}
    for key, get in (("score", NAME), ("weighted", NAME + WEIGHTED)):
        values = [e[key] for e in per_context if key in e]
        if len(values) == len(per_context):
            scores[get] = sum(values) / len(values)
            scores[get.replace(NAME, f"{NAME}.max")] = max(values)
    for head in (NAME, f"{NAME}.max"):
        scores[head + GREEDY] = scores[head]
    return MetricResult(scores=scores, details={"contexts": per_context})


def _entry(answers: list[Asked[Any]]) -> dict[str, Any]:
    """One context's details: the best piece's answer and score (its greedy rating / 3), the
    judge's P of each rating there and its expected rating / 3 (`weighted`, the best piece's)."""
    weighted = [_expected(a) for a in answers]
    best = max(range(len(answers)), key=lambda i: (answers[i].answer.rating, weighted[i] or 0.0))
    answer = answers[best].answer
    entry: dict[str, Any] = {**answer.model_dump(), "score": answer.rating / SCALE}
    probs = level_probs(answers[best].probs[0] if answers[best].probs else None, RATINGS)
    if probs is not None and all(w is not None for w in weighted):
        entry["p_ratings"] = {str(v): round(p, 4) for v, p in probs.items()}
        entry["weighted"] = max(w for w in weighted if w is not None)
    if len(answers) > 1:
        entry["pieces"] = len(answers)
    return entry


def _expected(asked: Asked[Any]) -> float | None:
    """Σ P(r)·r / 3 over the ratings at this piece's rating, or None without probabilities."""
    probs = level_probs(asked.probs[0] if asked.probs else None, RATINGS)
    return None if probs is None else sum(v * p for v, p in probs.items()) / SCALE
