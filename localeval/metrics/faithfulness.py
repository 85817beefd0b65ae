"""faithfulness(q, a, C): the statements of each of the answer's sentences, each judged against C.

The answer is split into sentences (deterministic) and the judge writes the statements of each
numbered sentence (metrics/statements.py: exact-length, bounded answers). Each statement gets a
verdict; support counts only if the statement has no number or name the context lacks (and, in
the evidence style, the judge's copy is found in the context; metrics/evidence.py).
score = supported statements / statements; `.soft` = the mean of the judge's P(verdict = 1) over
what the grammar allows (0 where a check overruled it). Contexts too long for the window are
split into pieces (metrics/chunking.py). Only empty contexts, or an answer without a sentence →
unscored, with the reason.
"""

from __future__ import annotations

from typing import Any

from localeval.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.chunking import Support, support_verdicts
from localeval.metrics.statements import Statements, anchored_statements


def nonempty(texts: list[str] | None) -> list[str]:
    return [t for t in texts or [] if t.strip()]


async def statements_of(ctx: MetricContext, text: str, question: str | None) -> Statements:
    """The anchored statements of `text` (an answer or a ground truth); shared by faithfulness,
    context_recall and answer_correctness: one set of requests per text and sample."""
    return await anchored_statements(ctx, text, question)


def statement_details(found: Statements, support: Support) -> dict[str, Any]:
    """Per statement: its sentence number, the verdict and why; plus pieces and retries."""
    details: dict[str, Any] = {
        "sentences": found.sentences,
        "statements": [{"statement": a.statement, "sentence": a.sentence, **v}
                       for a, v in zip(found.items, support.verdicts, strict=True)],
    }
    if support.pieces > 1:
        details["context_pieces"] = support.pieces
    if found.retries or support.retries:
        details["judge_retries"] = found.retries + support.retries
    return details


@metric("faithfulness", requires=("answer", "contexts"),
        steps=("faithfulness_statements", "faithfulness_verdicts"),
        description="share of the answer's statements that the contexts support")
async def faithfulness(sample: Sample, ctx: MetricContext) -> MetricResult:
    contexts = nonempty(sample.contexts)
    if not contexts:
        return MetricResult.unscored("faithfulness", "every context is empty")
    found = await statements_of(ctx, sample.answer or "", sample.question)
    if not found.items:
        return MetricResult.unscored("faithfulness", "the answer has no sentence",
                                     statements=[])
    support = await support_verdicts(ctx, "faithfulness_verdicts", found.texts, split="contexts",
                                     contexts=contexts, question=sample.question)
    scores = {"faithfulness": support.supported / len(found.items)}
    if support.p_supported is not None:  # the judge's own confidence: breaks ties between answers
        scores["faithfulness.soft"] = support.p_supported / len(found.items)
    return MetricResult(scores=scores, details=statement_details(found, support))
