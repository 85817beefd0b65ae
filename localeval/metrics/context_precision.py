"""context_precision(q, C, g): per context, was it useful for reaching the ground truth?

- context_precision = useful / k;
- context_precision.average_precision = Σ_k precision@k · v_k / Σ_k v_k (rank-aware; 0 when no
  context is useful, as average precision is when nothing relevant was retrieved).

One judge request per context: the judge copies the document's sentence that gives a fact of
the reference answer (or "none"), then decides; "useful" counts only if the copy is found in the
document (metrics/evidence.py). A context too long for the window is split and counts as useful
if any piece is.
"""

from __future__ import annotations

from localeval.dataset import Sample
from localeval.metrics.base import MetricContext, MetricResult, metric
from localeval.metrics.chunking import ask_pieces, evidence_chars, verdict_style
from localeval.metrics.evidence import decide
from localeval.schemas import checked_verdict

NAME = "context_precision"


def average_precision(useful: list[int]) -> float:
    """Σ precision@k · v_k / Σ v_k over ranks k (1-based); 0.0 when nothing is useful."""
    hits, total = 0, 0.0
    for k, v in enumerate(useful, start=1):
        if v:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0


@metric(NAME, requires=("question", "contexts", "ground_truth"),
        steps=("context_precision_useful",),
        description="share of the contexts useful for reaching the ground truth, and its "
                    "rank-aware average precision")
async def context_precision(sample: Sample, ctx: MetricContext) -> MetricResult:
    style = verdict_style(ctx)
    chars = evidence_chars(ctx)
    per_context = []
    for context in sample.contexts or []:
        if not context.strip():
            per_context.append({"verdict": 0, "reason": "empty context"})
            continue
        answers = await ask_pieces(ctx, "context_precision_useful", checked_verdict(style, chars),
                                   split="context", question=sample.question,
                                   ground_truth=sample.ground_truth, context=[context],
                                   style=style)
        decided = [decide(sample.ground_truth or "", answer.model_dump(), piece.texts,
                          sample.question, check_evidence=style == "evidence",
                          material_name="document", details=False)
                   for piece, answer in answers]
        entry = max(decided, key=lambda d: d["verdict"])
        if len(answers) > 1:
            entry["pieces"] = len(answers)
        per_context.append(entry)
    if not per_context:
        return MetricResult.unscored(NAME, "no contexts")
    useful = [v["verdict"] for v in per_context]
    return MetricResult(
        scores={NAME: sum(useful) / len(useful),
                f"{NAME}.average_precision": average_precision(useful)},
        details={"contexts": per_context},
    )
