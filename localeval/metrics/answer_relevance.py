"""answer_relevance(q, a): the judge writes n distinct questions that the answer responds to,
each flagged 1 if the answer answers it clearly and directly (0: evasive, vague, non-committal).

score = mean over the distinct generated questions of cos(E(q), E(q_i)) · flag_i (negative
cosines count as 0). n = settings.answer_relevance_n (default 3), asked for in one call so the
questions differ; repeats (after normalising case, width and spaces) are counted once.
"""

from __future__ import annotations

from localeval.data.dataset import Sample
from localeval.judge.schemas import question_list
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.text import normalize


@metric("answer_relevance", requires=("question", "answer"), embedder=True,
        steps=("answer_relevance_questions",),
        examples={"answer_relevance_questions": lambda ex: {"answer": ex.answer, "n": 3}},
        verdict_keys=("clear",),
        description="how well questions generated from the answer match the real question")
async def answer_relevance(sample: Sample, ctx: MetricContext) -> MetricResult:
    n = ctx.settings.answer_relevance_n
    found = await ctx.ask("answer_relevance_questions", question_list(n, ctx.settings.explain),
                          answer=sample.answer, n=n)
    generated = []
    seen: set[str] = set()
    for item in found.questions:  # type: ignore[attr-defined]
        key = normalize(item.question)
        if key and key not in seen:
            seen.add(key)
            generated.append(item.model_dump())
    if not generated:
        return MetricResult.unscored("answer_relevance", "the judge wrote no usable question")
    for g in generated:
        g["cosine"] = await ctx.cosine(sample.question or "", g["question"])
    score = sum(max(0.0, g["cosine"]) * g["clear"] for g in generated) / len(generated)
    return MetricResult(scores={"answer_relevance": score},
                        details={"generated_questions": generated, "distinct": len(generated)})
