"""refusal(q, a): does the answer decline to answer the question?

The judge reads the question and the answer and says whether the answer refuses: it says it does
not know, cannot or will not answer, or that the information is not available, and gives no
answer (a wrong, partial or hedged answer is no refusal). refusal = 1 for a refusal, 0 for an
answer: its mean is the refusal rate — too high on questions the material answers, and the
right thing on questions it does not. `refusal.greedy` = the same verdict, `refusal.weighted` =
the judge's P(refused = 1), when the judge gives probabilities. Runs only when named
(`--metrics refusal`): one judge request per sample, and with explanations on a second one for
the reason, asked after the verdict (the verdict is the same with and without explanations).

A yes/no rubric (metrics/rubric.py) asked with its own template (prompts/<lang>/
refusal_verdict.j2) and answer model (Refusal: field `refused`).
"""

from __future__ import annotations

from localeval.metrics.rubric import REASON_STEP, Frame, register_builtin
from localeval.rubrics import rubric

NAME = "refusal"
STEP = "refusal_verdict"
DESCRIPTION = ("1 when the answer declines to answer the question (says it does not know, "
               "cannot answer, or the information is missing); the mean is the refusal rate")

RUBRIC = rubric(NAME, requires=("question", "answer"), scale="yes/no", higher_is_better=False,
                criteria="The answer declines to answer the question: it says that it does not "
                         "know, that it cannot or will not answer, or that the information is "
                         "not available, and gives no answer.",
                source="localeval/metrics/refusal.py")
FRAME = Frame(step=STEP, field="refused", model="Refusal",
              description="1 = the answer declines to answer, 0 = it answers", main="greedy",
              variables=lambda sample: {"question": sample.question, "answer": sample.answer})

register_builtin(RUBRIC, FRAME, default=False, order=1000, description=DESCRIPTION,
                 direction_fixed=False,  # too high on answerable questions, right on unanswerable
                 examples={STEP: lambda ex: {"question": ex.question, "answer": ex.answer},
                           REASON_STEP: lambda ex: {"level": 1}},
                 verdict_keys=("refused",))
