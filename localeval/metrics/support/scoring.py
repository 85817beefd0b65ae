"""What the claim metrics share above the judging: a sample's non-empty texts, the claims of a
text (its sentences, or the judge's anchored statements), and the one body of faithfulness and
context_recall: a text's claims judged against the contexts, scored as the share supported."""

from __future__ import annotations

from localeval.metrics.base import MetricContext, MetricResult
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
                                              enumerate(claim_texts(sentences, question,
                                                                    ctx.language))])
    return await anchored_statements(ctx, text, question)


async def claims_supported(ctx: MetricContext, name: str, step: str, text: str,
                           question: str | None, contexts: list[str] | None,
                           *, whose: str) -> MetricResult:
    """Score `name` = the share of `text`'s claims the contexts support (`step`: the verdicts'
    template); `name.soft` = the mean P(supported), the judge's own confidence, which breaks
    ties. Unscored when every context is empty, or `whose` text ("the answer") has no sentence
    or makes no claim."""
    contexts = nonempty(contexts)
    if not contexts:
        return MetricResult.unscored(name, "every context is empty")
    claims = await judge_claims(ctx, step, text, question, contexts)
    if not claims.sentences:
        return MetricResult.unscored(name, f"{whose} has no sentence", statements=[])
    if not claims.statements:
        return MetricResult.unscored(name, f"{whose} makes no claim: every sentence is a "
                                     "question", **claims.details())
    scores = {name: claims.supported / len(claims.statements)}
    if claims.p_supported is not None:
        scores[f"{name}.soft"] = claims.p_supported / len(claims.statements)
    return MetricResult(scores=scores, details=claims.details())
