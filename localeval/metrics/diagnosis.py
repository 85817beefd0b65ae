"""The diagnosis metrics (RAGChecker's, Ru et al. 2024): where the wrong and missing claims come
from, the retriever or the generator, read off one claim matrix (metrics/claims/matrix.py).

- claim_recall: ground-truth claims some context entails / ground-truth claims (retriever);
- context_utilization: of those, the share the answer states (generator);
- noise_sensitivity: wrong answer claims some context entails / answer claims; `.relevant`
  those a relevant context (one entailing a ground-truth claim) entails, `.irrelevant` those
  only an irrelevant one entails (generator); lower is better;
- hallucination: wrong answer claims no context entails / answer claims; lower is better;
- self_knowledge: correct answer claims no context entails / answer claims (neither better nor
  worse: the generator answered from what it knows).

Each score is also written as `.greedy` (the same figure) and `.weighted`: the judge's
P(verdict = 1) of each cell in place of its 0/1, the expected share (claims/matrix._weighted;
absent where the judge gives no probabilities, and wherever the score is undefined).

The overall claim precision, recall and F1 are answer_correctness's `.precision`, `.recall`,
`.f1` (the same verdicts): not repeated here. Run them with `--metrics diagnosis` (not by
default: with several contexts they ask each context alone). Each undefined case is unscored
with its reason (a sub-score's in `details.undefined`); a sample whose every context is empty
is not diagnosed at all (no request, no claim classed).
"""

from __future__ import annotations

from typing import Any

from localeval.data.dataset import Sample
from localeval.metrics.base import GROUPS, MetricContext, MetricResult, metric
from localeval.names import DIAGNOSIS_METRICS, GREEDY, WEIGHTED

ORDER = 75
"""After answer_correctness, whose verdicts they share."""
ANSWER_REQUIRES = ("answer", "contexts", "ground_truth")
ANSWER_STEPS = ("answer_correctness_answer", "answer_correctness_reference",
                "faithfulness_verdicts", "context_recall_verdicts")
"""What the answer-side metrics ask (a claim's sentences need no step; with `--claims
statements` the statements come from faithfulness_statements)."""
ALL_STEPS = ("faithfulness_statements", *ANSWER_STEPS)


async def _diagnosed(sample: Sample, ctx: MetricContext, name: str, keys: tuple[str, ...],
                     *, answer_side: bool = True) -> MetricResult:
    """The scores `keys` of the sample's matrix; details: its claims with their class. A sample
    without a non-empty context asks nothing and classes no claim: every key unscored."""
    from localeval.metrics.claims.matrix import NO_CONTEXT, claim_matrix, diagnose
    from localeval.metrics.claims.score import nonempty

    if not nonempty(sample.contexts):
        return MetricResult(scores=dict.fromkeys(keys), reason=NO_CONTEXT,
                            details={"undefined": dict.fromkeys(keys[1:], NO_CONTEXT)}
                            if keys[1:] else {})
    m = await claim_matrix(ctx, sample, answer_side=answer_side)
    d = diagnose(m)
    details: dict[str, Any] = {"truth_claims": m.truth_json()}
    if answer_side:
        details = {"answer_claims": m.answer_json(), **details}
    details["relevant_contexts"] = m.relevant_numbers
    undefined = {k: d.reasons[k] for k in keys[1:] if k in d.reasons}
    if undefined:
        details["undefined"] = undefined
    if m.retries:
        details["judge_retries"] = m.retries
    scores = {key: d.scores.get(key) for k in keys for key in (k, k + GREEDY, k + WEIGHTED)
              if key == k or key in d.scores}  # a key, then its .greedy and .weighted
    return MetricResult(scores=scores, details=details, reason=d.reasons.get(name))


@metric("claim_recall", requires=("contexts", "ground_truth"), order=ORDER,
        steps=("faithfulness_statements", "context_recall_verdicts"), default=False,
        verdict_keys=("stated",),
        description="share of the ground truth's claims that some context entails, each "
                    "context judged alone (RAGChecker's claim recall: the retriever)")
async def claim_recall(sample: Sample, ctx: MetricContext) -> MetricResult:
    return await _diagnosed(sample, ctx, "claim_recall", ("claim_recall",), answer_side=False)


@metric("context_utilization", requires=ANSWER_REQUIRES, order=ORDER, steps=ALL_STEPS,
        default=False, verdict_keys=("stated", "correct"),
        description="of the ground truth's claims some context entails, the share the answer "
                    "states (RAGChecker: the generator's use of what was retrieved)")
async def context_utilization(sample: Sample, ctx: MetricContext) -> MetricResult:
    return await _diagnosed(sample, ctx, "context_utilization", ("context_utilization",))


@metric("noise_sensitivity", requires=ANSWER_REQUIRES, order=ORDER, steps=ALL_STEPS,
        default=False, higher_is_better=False, verdict_keys=("stated", "correct"),
        description="share of the answer's claims that are wrong but entailed by a context; "
                    ".relevant by a relevant one, .irrelevant by irrelevant ones only (lower "
                    "is better)")
async def noise_sensitivity(sample: Sample, ctx: MetricContext) -> MetricResult:
    return await _diagnosed(sample, ctx, "noise_sensitivity", (
        "noise_sensitivity", "noise_sensitivity.relevant", "noise_sensitivity.irrelevant"))


@metric("hallucination", requires=ANSWER_REQUIRES, order=ORDER, steps=ALL_STEPS,
        default=False, higher_is_better=False, verdict_keys=("stated", "correct"),
        description="share of the answer's claims that are wrong and entailed by no context "
                    "(lower is better)")
async def hallucination(sample: Sample, ctx: MetricContext) -> MetricResult:
    return await _diagnosed(sample, ctx, "hallucination", ("hallucination",))


@metric("self_knowledge", requires=ANSWER_REQUIRES, order=ORDER, steps=ALL_STEPS,
        default=False, verdict_keys=("stated", "correct"), direction_fixed=False,
        description="share of the answer's claims that are correct but entailed by no context "
                    "(the generator's own knowledge)")
async def self_knowledge(sample: Sample, ctx: MetricContext) -> MetricResult:
    return await _diagnosed(sample, ctx, "self_knowledge", ("self_knowledge",))


GROUPS["diagnosis"] = DIAGNOSIS_METRICS
