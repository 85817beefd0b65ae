"""faithfulness(q, a, C): the statements of each of the answer's sentences, each judged against C.

The answer is split into sentences (deterministic); a plain question claims nothing, and a
sentence equal to a whole sentence of a context is supported without a request
(metrics/support/claims.py). Each other sentence is judged as written (or, with `--claims statements`,
the statements the judge writes for it, kept true to their sentence). A claim is supported when
the judge's P(supported) reaches τ (metrics/support/threshold.py) and it has no number or name the
context lacks (metrics/support/evidence.py); long contexts are narrowed to the passages that bear on
each claim (metrics/support/focus.py).
score = supported claims / claims; `.soft` = the mean of the judge's P(verdict = 1) over
what the grammar allows (0 where a check overruled it, 1 for a quote). Contexts too long for
the window are split into pieces (metrics/support/verdicts.py). Empty contexts, an answer without a
sentence, or one of questions only → unscored, with the reason.
"""

from __future__ import annotations

from localeval.data.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.support.claims import claim_texts, judge_claims
from localeval.metrics.support.statements import Anchored, AnchoredStatements, anchored_statements
from localeval.text import split_sentences


def nonempty(texts: list[str] | None) -> list[str]:
    return [t for t in texts or [] if t.strip()]


async def statements_of(ctx: MetricContext, text: str, question: str | None) -> AnchoredStatements:
    """The claims of every sentence of `text` (answer_correctness's both sides): the sentences
    themselves (a fragment with its question), or with `claims = "statements"` the anchored
    statements the judge writes."""
    if ctx.settings.claims == "sentences":
        sentences = split_sentences(text)
        return AnchoredStatements(sentences, [Anchored(c, i + 1) for i, c in
                                      enumerate(claim_texts(sentences, question, ctx.language))])
    return await anchored_statements(ctx, text, question)


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
    contexts = nonempty(sample.contexts)
    if not contexts:
        return MetricResult.unscored("faithfulness", "every context is empty")
    claims = await judge_claims(ctx, "faithfulness_verdicts", sample.answer or "",
                                sample.question, contexts)
    if not claims.sentences:
        return MetricResult.unscored("faithfulness", "the answer has no sentence",
                                     statements=[])
    if not claims.statements:
        return MetricResult.unscored("faithfulness", "the answer makes no claim: every "
                                     "sentence is a question", **claims.details())
    scores = {"faithfulness": claims.supported / len(claims.statements)}
    if claims.p_supported is not None:  # the judge's own confidence: breaks ties between answers
        scores["faithfulness.soft"] = claims.p_supported / len(claims.statements)
    return MetricResult(scores=scores, details=claims.details())
