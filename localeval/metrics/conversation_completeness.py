"""conversation_completeness(turns): the share of the user's requests the conversation met.

A conversation metric (`requires=("turns",)`, localeval/conversation.py). For each user message
the judge reads the conversation before it, the message and the assistant's reply to it (the
assistant turns up to the next user message), and says whether the message asks for something
(`request`) and whether the reply gives all of it (`met`). A request met only later, after a
clarifying question, counts as not met at the message that asked it. One request
per user message. score = met requests / requests; `.weighted` = the mean P(met = 1) over the
requests; unscored when no message asks for anything. `details.turns` each user message's
verdicts and reason. A message with two requests counts once, met only when both are.
"""

from __future__ import annotations

import asyncio

from localeval.data.conversation import Turn, transcript, turns_of
from localeval.data.dataset import Sample
from localeval.judge.interface import field_p_yes
from localeval.judge.schemas import BareRequestMet, RequestMet
from localeval.metrics.base import MetricContext, MetricResult, metric, share_scores

NAME = "conversation_completeness"
STEP = "conversation_completeness_verdict"
NONE = {"en": "(nothing)", "zh": "（无）"}
EXAMPLE = {
    "en": {"before": NONE["en"], "message": "How tall is the Eiffel Tower, and when did it open?",
           "reply": "The Eiffel Tower is 330 metres tall."},
    "zh": {"before": NONE["zh"], "message": "埃菲尔铁塔有多高？哪一年开放的？",
           "reply": "埃菲尔铁塔高330米。"},
}


def replies(turns: list[Turn], k: int) -> list[Turn]:
    """The assistant turns that answer the user message at position k: those after it, up to
    the next user message."""
    out = []
    for t in turns[k + 1:]:
        if t.role == "user":
            break
        out.append(t)
    return out


@metric(NAME, requires=("turns",), order=210, steps=(STEP,),
        examples={STEP: lambda ex: EXAMPLE[ex.language]},
        verdict_keys=("met",),
        description="share of the user's requests over the conversation that the assistant met")
async def conversation_completeness(sample: Sample, ctx: MetricContext) -> MetricResult:
    turns = turns_of(sample.value("turns"))
    at = [k for k, t in enumerate(turns) if t.role == "user"
          and any(r.role == "assistant" for r in turns[k + 1:])]
    if not at:
        return MetricResult.unscored(NAME, "no user message has an assistant reply after it")
    schema = RequestMet if ctx.settings.explain else BareRequestMet
    none = NONE.get(ctx.language, NONE["en"])
    asked = await asyncio.gather(*(
        ctx.ask_probs(STEP, schema, ["met"], before=transcript(turns[:k], ctx.language) or none,
                      message=turns[k].content, reply="\n".join(
                          t.content for t in replies(turns, k))) for k in at))
    entries, met, probs = [], [], []
    for k, (answer, fields) in zip(at, asked, strict=True):
        p = field_p_yes(fields, "met")
        entry = {"turn": turns[k].number, "request": answer.request, "met": answer.met,
                 **({"reason": answer.reason} if ctx.settings.explain else {}),
                 **({"p_met": round(p, 4)} if p is not None else {})}
        entries.append(entry)
        if answer.request == 1:
            met.append(answer.met)
            probs.append(p)
    if not met:
        return MetricResult.unscored(NAME, "no user message asks for anything", turns=entries)
    return MetricResult(scores=share_scores(NAME, met, probs), details={"turns": entries})
