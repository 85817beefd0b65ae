"""A run folder's corrected scores: its judge scores on every sample, the labels on a few.

Per labelled score key (a metric, e.g. "faithfulness", or a sub-score such as
"faithfulness.weighted"): the judge's scores of the samples it scored (N) and the human label of
the n samples labelled at random give a prediction-powered mean (`ppi.ppi_mean`). A sample's
label is its sample-level row; without one, a claim metric's sample label is the mean of its
claim labels, used only when every claim the judge judged (`details[metric]["statements"]`) is
labelled and none is unsure; a diagnosis score's, without one, its value by the person's classes
of every claim of its side (class labels, labels/classes.py). Only labels drawn at random (order
"random" or none) enter the estimate; "informative" ones are for fitting. Only labels of the
content the run holds enter (`bound`: the sample's input_hash, a claim's text); a random sample
marked unsure is left out and counted (the labels are then no uniform draw). Everything the
reader should know (labels for samples the run lacks, duplicates, partly labelled samples, rows
refused or left out, unsure draws) is one line each, in `notes`.

The unit of a mean: a conversation's score is the mean over its assistant turns, so a label of
the whole conversation (no `turn`) estimates the mean over conversations; a key labelled per
turn (`turn` in its rows, labels/turns.py) is estimated over turns: the judge's score of every
assistant turn of the conversations (`details.turns`) and every single-turn row (one turn
each), the labels of turns and rows; labels of whole conversations of that key are then left
out, said in one line. Each estimate says its `unit`: "turns", "conversations", "rows" or
"rows and conversations".
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.errors import LabelsError
from localeval.labels.ppi import PPIEstimate, ppi_mean
from localeval.labels.store import LABELS_FILE, Label, LabelsRead, read_labels
from localeval.results.folder import LOCK_FILE
from localeval.results.records import RESULTS_FILE, SampleRecord, read_results
from localeval.results.runfiles import (
    SUMMARY_FILE,
    fingerprint_of,
    read_inputs,
    read_json,
)

MAX_PROBLEMS = 10
"""Bad label rows named one by one; the rest are counted in one line."""


@dataclass
class RunEstimates:
    """Per score key its PPIEstimate; keys labelled but not estimated, with why; one line per
    thing the reader should know."""

    run_dir: Path
    labels_path: Path
    estimates: dict[str, PPIEstimate] = field(default_factory=dict)
    not_estimated: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unsure: dict[str, int] = field(default_factory=dict)  # key → drawn at random, unsure
    units: dict[str, str] = field(default_factory=dict)  # key → what its mean is over
    dropped: dict[str, int] = field(default_factory=dict)  # why (bound.WHY) → labels left out

    def to_json(self) -> dict[str, Any]:
        """The `ppi` object of `meta-eval --labels --json` and summary.json's `labels`."""
        return {
            "run": str(self.run_dir),
            "labels": str(self.labels_path),
            "ppi": {k: {**estimate_json(e), "unsure": self.unsure.get(k, 0),
                        "unit": self.units.get(k, "rows")}
                    for k, e in self.estimates.items()},
            "not_estimated": dict(self.not_estimated),
            "dropped": dict(self.dropped),
            "notes": list(self.notes),
        }


def estimate_json(e: PPIEstimate) -> dict[str, Any]:
    return {"mean": e.mean, "ci": list(e.ci), "n_labels": e.n_labels, "judge_mean": e.judge_mean,
            "labels_only_mean": e.labels_only_mean, "labels_only_ci": list(e.labels_only_ci),
            "effective_labels": e.effective_labels, "n_rows": e.n_rows, "lam": e.lam}


def run_fingerprint(run_dir: Path) -> str | None:
    """The run's fingerprint: run.json's (checked against its inputs), else summary.json's."""
    inputs = read_inputs(run_dir)
    if inputs is not None:
        return fingerprint_of(inputs)
    summary = read_json(run_dir / SUMMARY_FILE)
    value = summary.get("run_fingerprint") if isinstance(summary, dict) else None
    return value if isinstance(value, str) else None


def being_written(run_dir: Path) -> str | None:
    """The pid of the localeval run writing `run_dir` now (it holds the folder's lock), else
    None. The lock is only tested, never kept."""
    from localeval.results.folder import lock_holder

    return lock_holder(run_dir / LOCK_FILE)


def read_run_labels(run_dir: Path, labels_path: Path | None = None) -> tuple[LabelsRead, Path,
                                                                             list[str]]:
    """The labels of a run (default: its labels.jsonl), rows for another fingerprint refused
    and rows that judged other content than the run holds left out (labels/bound.py, counted
    in the notes); LabelsError when the file is missing, empty or has no usable row. Also the
    notes."""
    from localeval.labels.bound import checker, run_content

    run_dir = Path(run_dir)
    path = Path(labels_path) if labels_path is not None else run_dir / LABELS_FILE
    if not (run_dir / RESULTS_FILE).is_file():
        raise LabelsError(f"{run_dir} is not a run folder: {RESULTS_FILE} not found (give the "
                          "--out folder of `localeval run`)")
    pid = being_written(run_dir)
    if pid is not None:
        raise LabelsError(f"{run_dir} is still being written by a localeval run (pid {pid}); "
                          "estimate once it has finished (its labels are kept)")
    fingerprint = run_fingerprint(run_dir)
    try:
        read = read_labels(path, fingerprint=fingerprint,
                           check=checker(run_content(run_dir)))
    except FileNotFoundError:
        raise LabelsError(f"{path} not found; label the run with `localeval label {run_dir}` "
                          "or give --labels FILE") from None
    except OSError as exc:
        raise LabelsError(f"cannot read {path}: {exc.strerror or exc}") from None
    other = [p for p in read.problems if "another fingerprint" in p]
    if not read.labels:
        if other and len(other) == len(read.problems):
            raise LabelsError(f"{path} labels another run (every row names a fingerprint other "
                              f"than {run_dir}'s {(fingerprint or '?')[:12]}…); give the labels "
                              "of this run")
        why = f" ({len(read.problems)} bad row(s), the first: {read.problems[0]})" \
            if read.problems else ""
        if read.n_dropped:
            raise LabelsError(f"{path} holds no label of the content {run_dir} holds: "
                              + "; ".join(read.binding_notes(path)))
        raise LabelsError(f"{path} holds no usable label{why}; label samples with `localeval "
                          f"label {run_dir}` or write rows such as "
                          '{"id": "s1", "metric": "faithfulness", "label": 1}')
    notes = list(read.problems[:MAX_PROBLEMS])
    if len(read.problems) > MAX_PROBLEMS:
        notes.append(f"{path}: {len(read.problems) - MAX_PROBLEMS} more bad row(s) left out")
    if other:
        notes.append(f"{path}: {len(other)} row(s) label a run with another fingerprint and "
                     "were refused")
    notes += read.notes(path)
    return read, path, notes


@dataclass
class Scored:
    """What the estimate needs of one record: its score and claim count per labelled key, and
    what it is: "row" (a single-turn row), "conversation", or "turn" (one of a conversation's
    assistant turns, with `turns`)."""

    scores: dict[str, float | None]
    claims: dict[str, int]
    kind: str = "row"


def load_scores(run_dir: Path, keys: set[str], *, turns: bool = False) -> dict[str, Scored]:
    """Per sample id of results.jsonl, its scores and claim counts of `keys` (the rest of each
    record is not kept); with `turns`, each conversation's assistant turns too, by their ids
    (labels/turns.py)."""
    results = read_results(Path(run_dir) / RESULTS_FILE, _keep(keys, turns))
    return {k: v for found in results.records for k, v in found}


def _scored(record: SampleRecord, keys: set[str], kind: str) -> Scored:
    from localeval.labels.classes import CLASSES, class_claims

    claims = {}
    for key in keys:
        if key in CLASSES:  # a class label's claims (labels/classes.py)
            found = class_claims(record.details, key)
            if found is not None:
                claims[key] = len(found)
            continue
        detail = record.details.get(key)
        statements = detail.get("statements") if isinstance(detail, dict) else None
        if isinstance(statements, list):
            claims[key] = len(statements)
    return Scored({k: record.scores.get(k) for k in keys}, claims, kind)


def score_keys(metrics: set[str]) -> list[str]:
    """The score keys labels of these label metrics estimate: each metric itself, a class
    label's (labels/classes.py) the diagnosis scores its side gives."""
    from localeval.labels.classes import CLASSES, SCORES

    return sorted({k for m in metrics for k in (SCORES[m] if m in CLASSES else (m,))})


def _keep(keys: set[str], turns: bool) -> Any:
    from localeval.labels.turns import turn_records

    def keep(record: SampleRecord, offset: int, length: int) -> list[tuple[str, Scored]]:
        own = turn_records(record)
        out = [(record.id, _scored(record, keys, "conversation" if own else "row"))]
        return (out + [(t.id, _scored(t, keys, "turn")) for t in own]) if turns else out
    return keep


def unit_of(kinds: set[str]) -> str:
    """What a mean over samples of these kinds (Scored.kind) is over, in words."""
    if "turn" in kinds:
        return "turns"
    return {frozenset({"conversation"}): "conversations",
            frozenset({"row", "conversation"}): "rows and conversations"}.get(
                frozenset(kinds), "rows")


def sample_labels(labels: dict[Any, Label], samples: dict[str, Scored], key: str,
                  notes: list[str], unsure: dict[str, int] | None = None
                  ) -> tuple[dict[str, float], int]:
    """The random sample labels of `key` (id → label) and how many informative ones there are;
    claim labels become a sample's label when they cover every claim, none unsure. A sample
    drawn at random and marked unsure (its label, or one of its claims) is left out: counted in
    `unsure[key]` and said in `notes` (the labels are then no uniform draw)."""
    out: dict[str, float] = {}
    informative: set[str] = set()
    skipped: set[str] = set()  # drawn at random, marked unsure
    claim_rows: dict[str, list[Label]] = defaultdict(list)
    for label in labels.values():
        if label.metric != key or label.unit not in samples:
            continue
        if label.claim is not None:
            claim_rows[label.unit].append(label)
        elif not label.random:
            informative.add(label.unit)
        elif label.label is not None:
            out[label.unit] = label.label
        else:
            skipped.add(label.unit)
    partial = 0
    for sid, rows in claim_rows.items():
        if sid in out or sid in informative or sid in skipped:
            continue  # a sample-level label says it directly
        if any(not r.random for r in rows):
            informative.add(sid)
            continue
        n_claims = samples[sid].claims.get(key)
        marks = {r.claim: r.label for r in rows}
        if not (n_claims and set(marks) >= set(range(n_claims))):
            partial += 1
        elif any(marks[i] is None for i in range(n_claims)):
            skipped.add(sid)
        else:
            out[sid] = sum(marks[i] for i in range(n_claims)) / n_claims  # type: ignore[misc]
    if partial:
        notes.append(f"{key}: {partial} sample(s) have claim labels that do not cover every "
                     "claim; they do not enter the estimate")
    _from_classes(labels, samples, key, notes, out, informative, skipped)
    if skipped:
        notes.append(unsure_note(key, len(skipped), len(skipped) + len(out)))
    if unsure is not None:
        unsure[key] = len(skipped)
    return out, len(informative)


def _from_classes(labels: dict[Any, Label], samples: dict[str, Scored], key: str,
                  notes: list[str], out: dict[str, float], informative: set[str],
                  skipped: set[str]) -> None:
    """For a diagnosis score key, the samples without a label of it whose every claim of its
    side has a class label (labels/classes.py): their value of it from the classes, into `out`
    (drawn at random), `informative` or `skipped` (a claim marked unsure)."""
    from localeval.labels.classes import SIDE_OF, share

    side = SIDE_OF.get(key)
    if side is None:
        return
    rows: dict[str, list[Label]] = defaultdict(list)
    for label in labels.values():
        if label.metric == side and label.unit in samples and label.claim is not None:
            rows[label.unit].append(label)
    partial = undefined = 0
    for sid, marks in rows.items():
        if sid in out or sid in informative or sid in skipped:
            continue  # a label of the score key itself says it directly
        if any(not r.random for r in marks):
            informative.add(sid)
            continue
        n_claims = samples[sid].claims.get(side)
        classes = {r.claim: r.klass for r in marks}
        if not (n_claims and set(classes) >= set(range(n_claims))):
            partial += 1
            continue
        named = [c for i in range(n_claims) if (c := classes[i]) is not None]
        if len(named) < n_claims:
            skipped.add(sid)
        elif (value := share(key, named)) is None:
            undefined += 1
        else:
            out[sid] = value
    if partial:
        notes.append(f"{side}: {partial} sample(s) have class labels that do not cover every "
                     "claim; they do not enter the estimate")
    if undefined:
        notes.append(f"{key}: {undefined} sample(s) whose claims' classes leave it undefined "
                     "(no claim retrieved, by the person's classes) do not enter the estimate")


def unsure_note(key: str, n_unsure: int, n_drawn: int) -> str:
    """What unsure marks among the random draw do to the estimate, in one line."""
    return (f"{key}: {n_unsure} of the {n_drawn} samples drawn at random were marked unsure "
            "and are left out, so the labels are no longer a uniform random draw: the interval "
            "holds for the samples a person could decide (conditional on them) and is biased "
            "if being unsure goes with the judge being wrong; decide those samples, or report "
            f"the {n_unsure} unsure beside the figure")


def estimate_run(run_dir: Path, labels_path: Path | None = None, *,
                 alpha: float = 0.05) -> RunEstimates:
    """Per labelled score key of the run in `run_dir`, the prediction-powered mean over the
    samples the judge scored (module doc); a key that cannot be estimated (too few labels, no
    score) is in `not_estimated`, with why. LabelsError when the labels cannot be read at all."""
    run_dir = Path(run_dir)
    read, path, notes = read_run_labels(run_dir, labels_path)
    metrics = {label.metric for label in read.labels.values()}
    keys = score_keys(metrics)
    every = load_scores(run_dir, set(keys) | metrics, turns=True)
    out = RunEstimates(run_dir, path, notes=notes, dropped=dict(read.dropped))
    missing = sorted({label.unit for label in read.labels.values() if label.unit not in every})
    if missing:
        shown = ", ".join(repr(m) for m in missing[:3]) + (" …" if len(missing) > 3 else "")
        notes.append(f"{path}: {len(missing)} labelled sample id(s) are not in {run_dir} "
                     f"({shown}); they are left out")
    summary = read_json(run_dir / SUMMARY_FILE)
    if isinstance(summary, dict) and summary.get("complete") is False:
        notes.append(f"{run_dir} is an interrupted run (summary.json: complete false): the "
                     "estimate covers the samples it holds; `localeval run --resume` finishes it")
    for key in keys:
        samples = _population(read.labels, every, key, notes)
        if not any(key in s.scores and s.scores[key] is not None for s in samples.values()):
            out.not_estimated[key] = "the run has no score of this key"
            continue
        out.units[key] = unit_of({s.kind for s in samples.values()})
        labelled, informative = sample_labels(read.labels, samples, key, notes, out.unsure)
        if informative:
            notes.append(f"{key}: {informative} sample(s) labelled in the informative order are "
                         "for fitting (τ, a head), not for the estimate")
        judge_all = [s.scores[key] for s in samples.values() if s.scores.get(key) is not None]
        unscored = [i for i in labelled if samples[i].scores.get(key) is None]
        if unscored:
            notes.append(f"{key}: {len(unscored)} labelled sample(s) the judge did not score "
                         "are left out (the estimate is over the samples it scored)")
        ids = [i for i in labelled if samples[i].scores.get(key) is not None]
        try:
            out.estimates[key] = ppi_mean(
                judge_all,  # type: ignore[arg-type]
                [samples[i].scores[key] for i in ids],  # type: ignore[misc]
                [labelled[i] for i in ids], alpha=alpha)
        except LabelsError as exc:
            out.not_estimated[key] = str(exc)
    out.notes = list(dict.fromkeys(out.notes))  # each said once
    return out


def _population(labels: dict[Any, Label], every: dict[str, Scored], key: str,
                notes: list[str]) -> dict[str, Scored]:
    """The units `key` is estimated over (module doc): turns and rows when a label of it names
    a turn, else rows and conversations; the labels of whole conversations left out then are
    said in `notes`."""
    from localeval.labels.classes import SIDE_OF

    of_key = [label for label in labels.values()
              if label.metric in (key, SIDE_OF.get(key))]
    if not any(label.turn is not None for label in of_key):
        return {i: s for i, s in every.items() if s.kind != "turn"}
    whole = {label.unit for label in of_key
             if label.unit in every and every[label.unit].kind == "conversation"}
    if whole:
        notes.append(f"{key}: {len(whole)} conversation(s) labelled as a whole are left out: "
                     "the estimate is over turns, as its labels of single turns are (label "
                     "the turns of those conversations)")
    return {i: s for i, s in every.items() if s.kind != "conversation"}
