"""The corrected difference of two labelled runs of one dataset (`localeval compare A B` when
both folders hold labels.jsonl): per score labelled in both, PPI on the paired differences
B − A over the samples both runs scored, with the labels of the samples labelled in both."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localeval.errors import LabelsError
from localeval.labels.estimate import load_scores, read_run_labels, sample_labels, score_keys
from localeval.labels.ppi import ppi_difference
from localeval.labels.store import LABELS_FILE


def corrected_differences(a_dir: Path, b_dir: Path) -> tuple[list[dict[str, Any]], list[str]]:
    """Per score key labelled in both runs: B − A corrected by the labels, with its 95 %
    interval; and the notes (one line each). Nothing when either folder has no labels.jsonl."""
    a_dir, b_dir = Path(a_dir), Path(b_dir)
    if not ((a_dir / LABELS_FILE).exists() and (b_dir / LABELS_FILE).exists()):
        return [], []
    read_a, _, notes_a = read_run_labels(a_dir)
    read_b, _, notes_b = read_run_labels(b_dir)
    notes = [f"A: {n}" for n in notes_a] + [f"B: {n}" for n in notes_b]
    metrics = ({x.metric for x in read_a.labels.values()}
               & {x.metric for x in read_b.labels.values()})
    keys = score_keys(metrics)  # a class label's: the diagnosis scores it gives
    sa, sb = load_scores(a_dir, set(keys) | metrics), load_scores(b_dir, set(keys) | metrics)
    out = []
    for key in keys:
        ya, _ = sample_labels(read_a.labels, sa, key, notes)
        yb, _ = sample_labels(read_b.labels, sb, key, notes)
        rows = [i for i in sa if sa[i].scores.get(key) is not None and i in sb
                and sb[i].scores.get(key) is not None]
        scored = set(rows)
        both = [i for i in ya if i in yb and i in scored]
        alone = len(set(ya) ^ set(yb))
        if alone:
            notes.append(f"{key}: {alone} sample(s) labelled in one run only are left out of "
                         "the corrected difference (label the same samples in both)")
        try:
            e = ppi_difference([sb[i].scores[key] for i in rows],  # type: ignore[misc]
                               [sa[i].scores[key] for i in rows],  # type: ignore[misc]
                               [sb[i].scores[key] for i in both],  # type: ignore[misc]
                               [sa[i].scores[key] for i in both],  # type: ignore[misc]
                               [yb[i] for i in both], [ya[i] for i in both])
        except LabelsError as exc:
            notes.append(f"{key}: no corrected difference: {exc}")
            continue
        out.append({"key": key, "diff": e.mean, "ci": list(e.ci), "n_labels": e.n_labels,
                    "n_rows": e.n_rows, "judge_diff": e.judge_mean,
                    "labels_only_diff": e.labels_only_mean,
                    "labels_only_ci": list(e.labels_only_ci),
                    "effective_labels": e.effective_labels,
                    "excludes_zero": e.ci[0] > 0 or e.ci[1] < 0})
    return out, list(dict.fromkeys(notes))
