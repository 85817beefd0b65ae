"""knowledge_retention(turns): does each assistant reply keep to what the user stated?

A conversation metric (`requires=("turns",)`, localeval/conversation.py). For each assistant
turn the judge reads the conversation before it and the reply, and says whether the reply keeps
to the facts, preferences and constraints the user stated (a diet, an allergy, a budget, a
date): retained 0 when it contradicts, ignores or forgets one (pancetta for a vegetarian,
amoxicillin for a penicillin allergy) or asks again for what the user already said. One request
per assistant turn. score = the share of assistant turns that retain; `.weighted` = the mean
P(retained = 1); `details.turns` each turn's verdict and reason.
"""

from __future__ import annotations

import asyncio

from localeval.data.conversation import transcript, turns_of
from localeval.data.dataset import Sample
from localeval.judge.interface import field_p_yes
from localeval.judge.schemas import BareRetained, Retained
from localeval.metrics.base import MetricContext, MetricResult, metric, share_scores

NAME = "knowledge_retention"
STEP = "knowledge_retention_verdict"
EXAMPLE = {
    "en": {"history": "User: I am vegetarian. What can I cook tonight?",
           "reply": "Try a carbonara with crispy pancetta."},
    "zh": {"history": "用户：我吃素。今晚可以做什么菜？",
           "reply": "试试培根蛋酱意面，加上煎脆的培根。"},
}


@metric(NAME, requires=("turns",), order=200, steps=(STEP,),
        examples={STEP: lambda ex: EXAMPLE[ex.language]},
        verdict_keys=("retained",),
        description="share of assistant turns that keep to what the user stated (no "
                    "contradiction, nothing forgotten or asked again)")
async def knowledge_retention(sample: Sample, ctx: MetricContext) -> MetricResult:
    turns = turns_of(sample.value("turns"))
    at = [k for k, t in enumerate(turns) if t.role == "assistant" and k > 0]
    if not at:
        return MetricResult.unscored(NAME, "no assistant turn follows a user turn")
    schema = Retained if ctx.settings.explain else BareRetained
    asked = await asyncio.gather(*(
        ctx.ask_probs(STEP, schema, ["retained"], history=transcript(turns[:k], ctx.language),
                      reply=turns[k].content) for k in at))
    entries, probs = [], []
    for k, (answer, fields) in zip(at, asked, strict=True):
        p = field_p_yes(fields, "retained")
        probs.append(p)
        entries.append({"turn": turns[k].number, "retained": answer.retained,
                        **({"reason": answer.reason} if ctx.settings.explain else {}),
                        **({"p_retained": round(p, 4)} if p is not None else {})})
    scores = share_scores(NAME, [e["retained"] for e in entries], probs)
    return MetricResult(scores=scores, details={"turns": entries})
