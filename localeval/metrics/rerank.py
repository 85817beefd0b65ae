"""rerank_relevancy(q, C): the judge rates each context's relevance to the question on 0–3
(0 irrelevant, 1 related but not useful, 2 partly answers, 3 answers it), normalised to [0, 1].

rerank_relevancy = mean over contexts; rerank_relevancy.max = the best context's rating.
A context too long for the window is split; its rating is the best piece's.
"""

from __future__ import annotations

from localeval.data.dataset import Sample
from localeval.judge.schemas import rating
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.claims.evidence import ask_pieces
from localeval.metrics.claims.score import nonempty

NAME = "rerank_relevancy"
SCALE = 3


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
                                   split="context", question=sample.question, context=[context])
        best = max((a.answer for a in answers), key=lambda a: a.rating)  # type: ignore[attr-defined]
        entry = {**best.model_dump(), "score": best.rating / SCALE}  # type: ignore[attr-defined]
        if len(answers) > 1:
            entry["pieces"] = len(answers)
        per_context.append(entry)
    scores = [e["score"] for e in per_context]
    return MetricResult(scores={NAME: sum(scores) / len(scores), f"{NAME}.max": max(scores)},
                        details={"contexts": per_context})
