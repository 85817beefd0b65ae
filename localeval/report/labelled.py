"""What a report shows of human labels and calibration, read from summary.json: the corrected
figure beside the judge's (summary["labels"], written by localeval.labels.attach when the run
folder holds labels.jsonl) and the judge's calibration note (summary["calibration"])."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from localeval.report.kit import fmt, fmt_ci

HEADER = ["score", "judge alone", "corrected", "95% CI", "labels only", "95% CI (labels)",
          "labels / rows", "labels worth"]
NOTE = ("Corrected = the judge's scores on every row plus human labels on a uniform random "
        "sample (prediction-powered inference, PPI++); 95 % interval (Student t, the variance "
        "with Agresti-Coull pseudo-labels, which hold it at small samples). "
        "Labels worth: how many labels the labels-only interval would need for the same width.")


def corrected(summary: Mapping[str, Any]) -> tuple[list[list[Any]], list[str]]:
    """The rows of the corrected-scores table and the lines under it (one sentence per score
    saying what it rests on, then the scores not estimated and the labels' notes)."""
    labels = summary.get("labels")
    if not isinstance(labels, Mapping):
        return [], []
    if labels.get("error"):
        return [], [f"labels.jsonl could not be used: {labels['error']}"]
    rows, lines = [], []
    for key, e in (labels.get("ppi") or {}).items():
        rows.append([key, fmt(e.get("judge_mean")), fmt(e.get("mean")), fmt_ci(e.get("ci")),
                     fmt(e.get("labels_only_mean")), fmt_ci(e.get("labels_only_ci")),
                     f"{e.get('n_labels')} / {e.get('n_rows')}",
                     f"{e.get('effective_labels', 0):.1f}"])
        if e.get("basis"):
            lines.append(str(e["basis"]))
    lines += [f"{key}: not estimated: {why}"
              for key, why in (labels.get("not_estimated") or {}).items()]
    lines += [str(n) for n in labels.get("notes") or []]
    return rows, lines


def calibration_note(summary: Mapping[str, Any]) -> str | None:
    """The sentence saying the judge's τ was not fitted for it, when it was not."""
    cal = summary.get("calibration")
    if isinstance(cal, Mapping) and not cal.get("calibrated", True):
        return str(cal.get("note") or "")
    return None
