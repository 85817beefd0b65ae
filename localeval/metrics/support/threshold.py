"""τ: the judge's P(supported) a claim needs to count as supported.

The greedy verdict digit of a small judge leans to "supported" (on hold-out Chinese pairs whose
context says there is no such thing it said 1 where its own P(1) was low). So every support
verdict (faithfulness, context_recall, answer_correctness, context_relevance, context_precision)
is decided by P(verdict = 1), renormalised over the two verdicts, against τ. τ was fitted with
`scripts/provenance/fit_threshold.py` on the fit half of the dev sets (docs/research.md,
*Support verdicts measured: τ, claims, passages*);
`--support-threshold` overrides it. A judge that gives no probabilities (the fake judge) keeps
its written verdict.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from localeval.config import Settings
    from localeval.judge.interface import FieldProbs
    from localeval.metrics.base import MetricContext

FITTED = {"en": 0.6, "zh": 0.45}
"""τ per language, fitted on the dev sets' fit half (rows not reported)."""


def threshold(ctx: MetricContext, step: str | None = None) -> float:
    """τ for this sample: the setting, else the learned verifier's own τ when its head scores
    the verdicts of `step`, else the value fitted for the judge's raw probability."""
    chosen = ctx.settings.support_threshold
    if chosen is not None:
        return chosen
    verifier = getattr(ctx.judge, "verifier", None)
    head = getattr(verifier, "head", None)
    if head is not None and step in head.steps:
        return head.tau.get(ctx.language, head.tau.get("en", 0.5))
    return FITTED.get(ctx.language, FITTED["en"])


def effective_thresholds(settings: Settings, head_tau: dict[str, float] | None = None
                         ) -> dict[str, float]:
    """τ per language as a run applies it (summary.json): the setting, else the learned
    verifier's (`head_tau`), else the fitted values."""
    chosen = settings.support_threshold
    base = head_tau or FITTED
    return {lang: chosen if chosen is not None else tau for lang, tau in base.items()}


def p_yes(entry: FieldProbs | None) -> float | None:
    """P(verdict = 1): the learned verifier's when it scored the verdict, else the judge's own
    probability renormalised over the two verdicts."""
    if entry is None:
        return None
    if entry.score is not None:
        return entry.score
    from localeval.verifier.apply import raw_p

    return raw_p(entry)
