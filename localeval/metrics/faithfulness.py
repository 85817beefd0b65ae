"""faithfulness(q, a, C): split the answer into atomic statements, then judge each against C.

score = supported statements / statements. No statements → unscored, with the reason.
"""

from __future__ import annotations

from localeval.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.schemas import Statements, verdict_list


@metric("faithfulness", requires=("question", "answer", "contexts"),
        steps=("faithfulness_statements", "faithfulness_verdicts"),
        description="share of the answer's statements that the contexts support")
async def faithfulness(sample: Sample, ctx: MetricContext) -> MetricResult:
    found = await ctx.ask("faithfulness_statements", Statements,
                          question=sample.question, answer=sample.answer)
    statements = [s.strip() for s in found.statements if s.strip()]
    if not statements:
        return MetricResult.unscored("faithfulness", "the judge found no statements in the answer",
                                     statements=[])
    judged = await ctx.ask("faithfulness_verdicts", verdict_list(len(statements), ctx.settings.explain),
                           contexts=sample.contexts, statements=statements)
    verdicts = [v.model_dump() for v in judged.verdicts]  # type: ignore[attr-defined]
    supported = sum(v["verdict"] for v in verdicts)
    return MetricResult(
        scores={"faithfulness": supported / len(statements)},
        details={"statements": [{"statement": s, **v} for s, v in zip(statements, verdicts, strict=True)]},
    )
