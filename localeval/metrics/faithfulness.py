"""faithfulness(q, a, C): the claims of each of the answer's sentences, each judged against C.

The answer is split into sentences (deterministic); a sentence that asserts nothing is no claim
(metrics/claims/split.py). Each other sentence is judged as written (or, with
`--claims statements`, the statements the judge writes for it, kept true to their sentence). A
claim is supported when the judge's P(supported) reaches τ (metrics/claims/verdicts.py) and it
has no number or name the context lacks (metrics/claims/checks.py); long contexts are
narrowed to the passages that bear on each claim (metrics/claims/evidence.py) and split into
pieces when too long for the window (metrics/claims/evidence.py).
score = supported claims / claims (also as `.greedy`); `.weighted` = the mean of the judge's
P(verdict = 1) over what the grammar allows (0 where a check overruled it); `.all_supported` =
1 when every claim is supported, else 0: padding (a true restatement beside a false claim)
raises the share, never this (claims/score.ALL_SUPPORTED). Empty contexts, an answer without a
sentence, or one asserting nothing → unscored, with the reason. The body is
claims/score.claims_supported, shared with context_recall.
"""

from __future__ import annotations

from localeval.data.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.claims.score import claims_supported


@metric("faithfulness", requires=("answer", "contexts"),
        order=10,
        steps=("faithfulness_statements", "faithfulness_verdicts"),
        examples={
            "faithfulness_statements": lambda ex: {
                "question": ex.question, "sentences": ex.statements, "first": 1, "last": 2,
                "count": 2, "numbers": None},
            "faithfulness_verdicts": lambda ex: {"contexts": ex.contexts,
                                                 "statements": ex.statements}},
        verdict_keys=("verdict",),
        description="share of the answer's statements that the contexts support")
async def faithfulness(sample: Sample, ctx: MetricContext) -> MetricResult:
    return await claims_supported(ctx, "faithfulness", "faithfulness_verdicts",
                                  sample.answer or "", sample.question, sample.contexts,
                                  whose="the answer", all_supported=True)
