"""faithfulness(q, a, C): split the answer into atomic statements, then judge each against C.

score = supported statements / statements. Contexts too long for the window are split into
pieces (metrics/chunking.py); a statement is supported if any piece supports it.
No statements, or only empty contexts → unscored, with the reason.
"""

from __future__ import annotations

import math
import re

from localeval.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.chunking import support_verdicts
from localeval.schemas import MAX_STATEMENTS, statements_up_to
from localeval.text import word_count

WORDS_PER_STATEMENT = 4
_WORD = re.compile(r"[^\W_]")  # a statement needs a letter, digit or CJK character ("……" is none)


def statement_limit(text: str) -> int:
    """At most one statement per 4 words (a CJK character counts 2/3 of a word), 1..24: a
    three-word answer is one claim, and a small judge must not pad it with invented ones."""
    return max(1, min(MAX_STATEMENTS, math.ceil(word_count(text) / WORDS_PER_STATEMENT)))


async def statements_of(ctx: MetricContext, text: str, question: str | None) -> list[str]:
    """The judge's atomic statements of `text` (an answer or a ground truth). Shared by
    faithfulness, context_recall and answer_correctness: one call per text and sample."""
    found = await ctx.ask("faithfulness_statements", statements_up_to(statement_limit(text)),
                          question=question or "", answer=text)
    return list(dict.fromkeys(s.strip() for s in found.statements if _WORD.search(s)))


def nonempty(texts: list[str] | None) -> list[str]:
    return [t for t in texts or [] if t.strip()]


@metric("faithfulness", requires=("answer", "contexts"),
        steps=("faithfulness_statements", "faithfulness_verdicts"),
        description="share of the answer's statements that the contexts support")
async def faithfulness(sample: Sample, ctx: MetricContext) -> MetricResult:
    contexts = nonempty(sample.contexts)
    if not contexts:
        return MetricResult.unscored("faithfulness", "every context is empty")
    statements = await statements_of(ctx, sample.answer or "", sample.question)
    if not statements:
        return MetricResult.unscored("faithfulness", "the judge found no statements in the answer",
                                     statements=[])
    support = await support_verdicts(ctx, "faithfulness_verdicts", statements, split="contexts",
                                     contexts=contexts)
    details = {"statements": [{"statement": s, **v}
                              for s, v in zip(statements, support.verdicts, strict=True)]}
    if support.pieces > 1:
        details["context_pieces"] = support.pieces
    return MetricResult(scores={"faithfulness": support.supported / len(statements)},
                        details=details)
