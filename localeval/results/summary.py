"""summary.json: what a run did, from the tally of every record and what the executor reports
of its models (the runner adds whether the run is complete, when it finished, what earlier
sessions loaded and, from the executor, its own keys such as "ray")."""

from __future__ import annotations

from typing import Any

from localeval import prompts
from localeval.config import Settings
from localeval.data.dataset import Dataset
from localeval.judge.client import JudgeStats
from localeval.metrics import Metric
from localeval.metrics.claims.verdicts import (
    calibration_status,
    effective_thresholds,
    step_thresholds,
)
from localeval.results.tally import ScoreTally
from localeval.version import __version__


def _retrieval_options(metrics: list[Metric], settings: Settings) -> dict[str, Any] | None:
    """How ndcg was computed, when it was: its gain (linear unless asked) and cutoffs."""
    if not any(m.name == "ndcg" for m in metrics):
        return None
    return {"ndcg_gain": settings.retrieval_gain, "at": list(settings.retrieval_at)}


def build_summary(
    data: Dataset,
    n_samples: int,
    tally: ScoreTally,
    metrics: list[Metric],
    settings: Settings,
    stats: JudgeStats | None,
    usage: dict[str, Any],
    elapsed: float,
) -> dict[str, Any]:
    """summary.json (but for what _finish adds), its metrics from the tally of every record
    (every metric run first: one with no score anywhere still gets a line); `stats` and
    `usage` as the executor reports them."""
    summary: dict[str, Any] = {
        "localeval_version": __version__,
        "dataset": {
            "source": data.source,
            "samples": n_samples,
            "input_errors": [p.model_dump() for p in data.problems],
            **({"conversations": data.conversations} if data.conversations else {}),
        },
        "metrics": tally.summary(),
        "models": usage["models"],
        "prompts": prompts.metric_prompt_hashes(metrics, conversations=bool(data.conversations)),
        "settings": settings.model_dump(mode="json"),
        "support_threshold": effective_thresholds(
            settings, (usage["models"].get("verifier") or {}).get("tau")),
        **({"step_thresholds": steps} if (steps := step_thresholds(
            settings, metrics)) else {}),
        "elapsed_s": round(elapsed, 3),
        "judge": None
        if stats is None
        else {
            "calls": stats.calls,
            "cached": stats.cached,
            "failures": stats.failures,
            "prompt_tokens": stats.prompt_tokens,
            "prompt_tokens_processed": stats.prompt_tokens_processed,
            "completion_tokens": stats.completion_tokens,
            "forced_tokens": stats.forced_tokens,
            "decode_s": round(stats.decode_s, 3),
            "tokens_by_step": stats.tokens_by_step,
            "floor": stats.floor(),
            "calls_by_step": stats.by_step,
            "cache_error": usage["cache_error"],
        },
        "retrieval": _retrieval_options(metrics, settings),
        "embedder": None
        if usage["texts_encoded"] is None
        else {"texts_encoded": usage["texts_encoded"]},
    }
    shield = tally.shield()
    if shield is not None:  # samples with text aimed at the evaluator (metrics/shield.py)
        summary["shield"] = shield
    calibration = calibration_status(settings, [m.name for m in metrics], usage["models"])
    if calibration is not None:  # whether τ was fitted for this judge
        summary["calibration"] = calibration
    return summary


def scored_nothing(summary: dict[str, Any], why: dict[str, str] | None = None) -> str | None:
    """The sentence saying that no score key of the run has a score on any sample (every sample
    errored, was skipped or is unscored), per metric with its counts and (`why`: metric → a
    skip or error reason of one sample) why; None when some sample scored."""
    metrics: dict[str, Any] = summary.get("metrics") or {}
    if any(m.get("count") for m in metrics.values()):
        return None
    n = (summary.get("dataset") or {}).get("samples", 0)
    parts = []
    for key, m in metrics.items():
        if m.get("metric", key) != key:
            continue  # a sub-score: its metric says it
        counts = [f"{m[k]} {k}" for k in ("errors", "skipped", "unscored") if m.get(k)]
        reason = (why or {}).get(key)
        parts.append(f"{key}: {', '.join(counts) or 'no score'}"
                     + (f", e.g. {reason}" if reason else ""))
    return (f"nothing scored: no metric has a score on any of the {n} sample(s)"
            + (f" ({'; '.join(parts)})" if parts else ""))
