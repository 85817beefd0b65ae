"""Corrected estimates in words: the terminal table and the sentence saying what one rests on.
Both read the JSON form (`RunEstimates.to_json()`, summary.json's `labels`)."""

from __future__ import annotations

from typing import Any


def basis(metric: str, e: dict[str, Any]) -> str:
    """One sentence: what the corrected figure of `metric` rests on (and what its mean is
    over: rows, conversations, or the turns of conversations)."""
    unsure = e.get("unsure") or 0
    unit = e.get("unit") or "rows"
    return (f"{metric}: corrected from {e['n_labels']} human labels drawn at random among the "
            f"{e['n_rows']} {unit} the judge scored (prediction-powered mean over {unit}, 95 % "
            "interval); "
            f"the judge alone says {e['judge_mean']:.3f}; with the judge, the {e['n_labels']} "
            f"labels give the interval of {e['effective_labels']:.0f} labels alone."
            + (f" {unsure} more sample(s) drawn were marked unsure and left out: the draw is no "
               "longer uniform, and the interval is conditional on the samples decided."
               if unsure else ""))


def _ci(pair: list[float]) -> str:
    return f"[{pair[0]:.3f}, {pair[1]:.3f}]"


def labels_table(data: dict[str, Any]) -> str:
    """Per labelled metric: the judge's mean, the labels' mean and interval, the corrected mean
    and interval, n labels of N rows and what the labels were worth; then the keys not
    estimated, with why."""
    from localeval.report.kit import text_table

    rows: list[tuple[Any, ...]] = [("metric", "judge", "labels only", "95% CI", "corrected",
                                    "95% CI", "labels/units", "mean over", "worth")]
    for key, e in data["ppi"].items():
        rows.append((key, f"{e['judge_mean']:.3f}", f"{e['labels_only_mean']:.3f}",
                     _ci(e["labels_only_ci"]), f"{e['mean']:.3f}", _ci(e["ci"]),
                     f"{e['n_labels']}/{e['n_rows']}", e.get("unit") or "rows",
                     f"{e['effective_labels']:.1f}"))
    lines = text_table(rows) if data["ppi"] else ["no metric could be estimated"]
    lines += [f"{key}: not estimated: {why}" for key, why in data["not_estimated"].items()]
    if data["ppi"]:
        lines.append("corrected = judge on every row + human labels on a uniform random sample "
                     "(PPI++); worth = labels the labels-only interval needs for the same width")
    return "\n".join(lines)
