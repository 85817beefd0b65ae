"""refusal(q, a): does the answer decline to answer the question?

The judge reads the question and the answer and says whether the answer refuses: it says it does
not know, cannot or will not answer, or that the information is not available, and gives no
answer (a wrong, partial or hedged answer is no refusal). refusal = 1 for a refusal, 0 for an
answer: its mean is the refusal rate — too high on questions the material answers, and the
right thing on questions it does not. `refusal.soft` = the judge's P(refused = 1), when the judge
gives probabilities. Runs only when named (`--metrics refusal`): one judge request per sample.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from localeval.data.dataset import Sample
from localeval.judge.schemas import REASON_CHARS
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.support.verdicts import p_yes

NAME = "refusal"
STEP = "refusal_verdict"


class Refusal(BaseModel):
    refused: Literal[0, 1] = Field(description="1 = the answer declines to answer, 0 = it answers")


class RefusalWithReason(BaseModel):
    reason: str = Field(max_length=REASON_CHARS, description="one short sentence")
    refused: Literal[0, 1] = Field(description="1 = the answer declines to answer, 0 = it answers")


@metric(NAME, requires=("question", "answer"), steps=(STEP,), default=False,
        higher_is_better=False,
        examples={STEP: lambda ex: {"question": ex.question, "answer": ex.answer}},
        verdict_keys=("refused",),
        description="1 when the answer declines to answer the question (says it does not know, "
                    "cannot answer, or the information is missing); the mean is the refusal rate")
async def refusal(sample: Sample, ctx: MetricContext) -> MetricResult:
    schema = RefusalWithReason if ctx.settings.explain else Refusal
    answer, probs = await ctx.ask_probs(STEP, schema, ["refused"], question=sample.question,
                                        answer=sample.answer)
    details = answer.model_dump()
    scores = {NAME: float(answer.refused)}
    p = p_yes(probs[0]) if probs else None
    if p is not None:
        scores[f"{NAME}.soft"] = p
        details["p_refused"] = round(p, 4)
    return MetricResult(scores=scores, details=details)
