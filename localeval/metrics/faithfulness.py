"""faithfulness(q, a, C): the statements of each of the answer's sentences, each judged against C.

The answer is split into sentences (deterministic); a plain question claims nothing, and a
sentence equal to a whole sentence of a context is supported without a request
(metrics/support/claims.py). Each other sentence is judged as written (or, with
`--claims statements`, the statements the judge writes for it, kept true to their sentence). A
claim is supported when the judge's P(supported) reaches τ (metrics/support/threshold.py) and it
has no number or name the context lacks (metrics/support/evidence.py); long contexts are
narrowed to the passages that bear on each claim (metrics/support/focus.py).
score = supported claims / claims; `.soft` = the mean of the judge's P(verdict = 1) over
what the grammar allows (0 where a check overruled it, 1 for a quote). Contexts too long for
the window are split into pieces (metrics/support/verdicts.py). Empty contexts, an answer
without a sentence, or one of questions only → unscored, with the reason. The body is
support/scoring.claims_supported, shared with context_recall.
"""

from __future__ import annotations

from localeval.data.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.support.scoring import claims_supported


@metric("faithfulness", requires=("answer", "contexts"),
        steps=("faithfulness_statements", "faithfulness_verdicts", "support_choice"),
        examples={
            "faithfulness_statements": lambda ex: {
                "question": ex.question, "sentences": ex.statements, "first": 1, "last": 2,
                "count": 2, "numbers": None},
            "faithfulness_verdicts": lambda ex: {"contexts": ex.contexts,
                                                 "statements": ex.statements},
            "support_choice": lambda ex: {"material_name": "context", "material": ex.contexts,
                                          "options": ex.statements}},
        verdict_keys=("verdict",),
        description="share of the answer's statements that the contexts support")
async def faithfulness(sample: Sample, ctx: MetricContext) -> MetricResult:
    return await claims_supported(ctx, "faithfulness", "faithfulness_verdicts",
                                  sample.answer or "", sample.question, sample.contexts,
                                  whose="the answer")
