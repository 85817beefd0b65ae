"""A run folder opened for labelling: its samples for one judge metric (the claims the judge
judged, or the sample's score when the metric has none), the two orders over them, and the labels
file every mark is appended to (labels/store.py). For a metric a conversation scored per
assistant turn, each of its turns is a sample of its own (labels/turns.py: `<id>#turn<n>`, shown
with the conversation before it), and its marks name the conversation and the turn.

Orders: "random" is the samples in a uniform random order fixed by the seed (Python's
`random.Random(seed).shuffle` of the scored ids in results order); it is labelled in sequence
(the next sample opens only when the one before is labelled), so its labels are a uniform random
draw — the only labels a corrected estimate uses. "informative" is the samples whose claim P is
nearest τ first (for a metric without claims: the score nearest 0.5); its labels are for fitting.
A sample first drawn at random keeps order "random" when corrected from the informative order;
a sample labelled in the informative order counts in the random draw once the random order
reaches it and the person confirms its marks there.
"""

from __future__ import annotations

import contextlib
import getpass
import itertools
import math
import os
import random
import stat
import threading
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from localeval.data.conversation import TURN_MARK
from localeval.errors import OutputError, UsageError, first_error
from localeval.labels.bound import binding, checker, units
from localeval.labels.classes import CLASSES, TRUTH_CLAIMS, VIEW_SCORES, class_rows, share
from localeval.labels.estimate import unit_of
from localeval.labels.store import LABELS_FILE, Key, Label, append_label, now, read_labels
from localeval.labels.turns import per_turn, turn_records
from localeval.names import WEIGHTED
from localeval.results.records import SampleRecord

ORDERS = ("random", "informative")
CLAIM_LABELS = (0.0, 1.0, None)  # not supported, supported, unsure
SAMPLE_LABELS = (0.0, 0.5, 1.0, None)  # the metric not at all, half, fully; unsure


# ---- what the run folder is -------------------------------------------------------------------


def writer_pid(run_dir: Path) -> str | None:
    """The pid of the localeval run writing `run_dir` now (it holds the folder's lock)."""
    from localeval.results.folder import LOCK_FILE, lock_holder

    return lock_holder(run_dir / LOCK_FILE)


def refuse_in_progress(run_dir: Path) -> None:
    """A run still writing `run_dir` is refused in one line: its samples still to come are not
    in the random order a seed fixes now, so labels drawn now would not be a uniform draw over
    the run."""
    pid = writer_pid(run_dir)
    if pid is not None:
        raise UsageError(
            f"{run_dir} is still being written by a localeval run (pid {pid}); label it once "
            "the run has finished (a random order fixed now would leave out the samples still "
            "to come)")


def default_who() -> str | None:
    with contextlib.suppress(Exception):
        return getpass.getuser()
    return None


# ---- one sample as the page shows it ----------------------------------------------------------


def claims_of(record: SampleRecord, metric: str) -> list[dict[str, Any]] | None:
    """The claims the judge judged for `metric` (details[metric]["statements"]; for a class
    label metric, labels/classes.py, the diagnosis' answer_claims or truth_claims), or None."""
    if metric in CLASSES:
        found: Any = class_rows(record.details, metric)
    else:
        details = record.details.get(metric)
        found = details.get("statements") if isinstance(details, dict) else None
    if isinstance(found, list) and found and all(
            isinstance(s, dict) and isinstance(s.get("statement"), str) for s in found):
        return found
    return None


def diagnosis_classes(record: SampleRecord, truth_side: bool) -> dict[str, str]:
    """Claim text → its diagnosis class (metrics/claims/matrix.py), from any diagnosis metric's
    details in the record (`answer_claims`, or `truth_claims` for ground-truth claims); empty
    when the run has none."""
    key = "truth_claims" if truth_side else "answer_claims"
    found: dict[str, str] = {}
    for detail in record.details.values():
        rows = detail.get(key) if isinstance(detail, dict) else None
        for row in rows if isinstance(rows, list) else []:
            if isinstance(row, dict) and isinstance(row.get("statement"), str) and isinstance(
                    row.get("class"), str):
                found.setdefault(row["statement"], row["class"])
    return found


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def segments(text: str, marks: Sequence[tuple[str, int, str]]) -> list[dict[str, Any]]:
    """`text` cut where the judge's evidence starts and ends: each piece with the claims whose
    closest sentence ("c") or evidence passage ("p") covers it. `marks`: (evidence text, claim
    index, "c" or "p"); evidence not found verbatim marks nothing. One sweep over the cuts:
    O(n log n) in the marks, plus the pieces' claim lists."""
    where: dict[str, int] = {}  # evidence → where it starts (-1: not found); searched once
    starts: dict[int, list[tuple[str, int]]] = defaultdict(list)
    ends: dict[int, list[tuple[str, int]]] = defaultdict(list)
    for needle, claim, kind in marks:
        needle = needle.strip()
        if not needle:
            continue
        if needle not in where:
            where[needle] = text.find(needle)
        at = where[needle]
        if at >= 0:
            starts[at].append((kind, claim))
            ends[at + len(needle)].append((kind, claim))
    cuts = sorted({0, len(text), *starts, *ends})
    active: dict[str, Counter[int]] = {"c": Counter(), "p": Counter()}  # covering spans
    out = []
    for start, end in itertools.pairwise(cuts):
        for kind, claim in ends.get(start, ()):
            active[kind][claim] -= 1
            if not active[kind][claim]:
                del active[kind][claim]
        for kind, claim in starts.get(start, ()):
            active[kind][claim] += 1
        piece: dict[str, Any] = {"t": text[start:end]}
        for kind in ("c", "p"):
            if active[kind]:
                piece[kind] = sorted(active[kind])
        out.append(piece)
    return out


def found_in(text: str, evidence: str) -> bool:
    return bool(evidence.strip()) and evidence.strip() in text


# ---- the session ------------------------------------------------------------------------------


@dataclass
class MetricView:
    """One metric's population (ids with a score, in results order), whether it has claims, and
    its two orders."""

    name: str
    ids: list[str]
    claims: bool
    random_order: list[str]
    informative_order: list[str]
    judge_scores: list[float]
    position: dict[str, dict[str, int]] = field(default_factory=dict)
    score: str = ""
    """The score key shown and estimated as the person labels (`score_key`): the metric's
    own, a class label metric's diagnosis score."""

    def __post_init__(self) -> None:
        self.score = self.score or self.name

    def order(self, name: str) -> list[str]:
        return self.random_order if name == "random" else self.informative_order


class RunSession:
    """A run folder opened for labelling (module doc). Thread-safe: the server's requests share
    one session; the labels file is read again when another writer changed it."""

    def __init__(self, run_dir: Path, *, seed: int | None = None, who: str | None = None,
                 data: Path | None = None) -> None:
        from localeval.results.folder import load_run
        from localeval.results.runfiles import RUN_FILE, fingerprint_of, read_inputs

        self.run_dir = run_dir
        if not run_dir.is_dir():
            raise UsageError(f"{run_dir} is not a folder; give the --out folder of "
                             "`localeval run` (or a test set made by `localeval generate`)")
        refuse_in_progress(run_dir)
        run = load_run(run_dir)
        self.records: dict[str, SampleRecord] = {r.id: r for r in run.records}
        # what a person labels: the records, and each conversation's assistant turns
        self.turns = {r.id: found for r in run.records if (found := turn_records(r))}
        self.units: dict[str, SampleRecord] = {
            **self.records, **{t.id: t for found in self.turns.values() for t in found}}
        self.turn_of = {t.id: (cid, int(t.id.rpartition(TURN_MARK)[2]))
                        for cid, found in self.turns.items() for t in found}
        self.content = {k: v for r in run.records for k, v in units(r).items()}
        self.summary = run.summary
        inputs = read_inputs(run_dir)
        self.fingerprint = fingerprint_of(inputs) if inputs is not None else (
            self.summary.get("run_fingerprint") or None)
        self.notes: list[str] = list(run.notes)
        if inputs is None:
            self.notes.append(f"{run_dir / RUN_FILE} is missing or unreadable: labels are "
                              "written without the run's fingerprint")
        cal = self.summary.get("calibration") or {}  # τ fitted for another judge: as the CLI
        if isinstance(cal, dict) and cal.get("calibrated") is False and cal.get("note"):
            self.notes.append(str(cal["note"]))
        if self.summary.get("complete") is False:
            self.notes.append("the run is incomplete (interrupted): the labels are a draw from "
                              "the samples it finished; finish it with --resume before labelling "
                              "for an estimate")
        self.who = who
        self.path = run_dir / LABELS_FILE
        if self.path.is_symlink():
            raise OutputError(f"{self.path} is a symbolic link; localeval never writes through "
                              "a link in a run folder — remove the link")
        self._lock = threading.RLock()
        self._seen: tuple[int, int] | None = None
        self.labels: dict[Key, Label] = {}
        self.client_ids: set[str] = set()  # every mark's page id in the labels file
        self._reload()
        self.seed = seed if seed is not None else self._last_seed()
        self.views: dict[str, MetricView] = {}
        self._score_keys: dict[str, str] = {}  # a class label metric's (score_key)
        self.metrics = self._judge_metrics()
        if not self.metrics:
            raise UsageError(f"{run_dir} holds no score of a judge metric to label (only "
                             "retrieval or embedding scores, or none); run a judge metric first")
        self.tau: dict[str, float] = {
            k: float(v) for k, v in (self.summary.get("support_threshold") or {}).items()
            if _number(v) is not None}
        self.dataset, self.dataset_note = self._open_dataset(data)
        langs = [r.language for r in self.records.values()]
        self.language = "zh" if langs.count("zh") > len(langs) / 2 else "en"

    # -- labels file --

    def _reload(self) -> None:
        """Read the labels file again when it changed since last read (another page, a tool)."""
        try:
            st = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            self._seen, self.labels, self.client_ids = None, {}, set()
            return
        except OSError as exc:
            raise OutputError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        if not stat.S_ISREG(st.st_mode):
            raise OutputError(f"{self.path} is not a regular file; remove it")
        mark = (st.st_size, st.st_mtime_ns)
        if mark == self._seen:
            return
        try:
            read = read_labels(self.path, fingerprint=self.fingerprint,
                               check=checker(self.content))
        except OSError as exc:
            raise OutputError(f"cannot read {self.path}: {exc.strerror or exc}") from None
        if self._seen is None:  # said once, at the start
            self.notes += read.problems[:5]
            if len(read.problems) > 5:
                self.notes.append(f"{self.path}: {len(read.problems) - 5} more bad row(s) "
                                  "left out")
            self.notes += read.binding_notes(self.path)
            unhashed = sum(not r.input_hash for r in self.records.values())
            if unhashed:
                self.notes.append(f"{unhashed} sample(s) of the run carry no input_hash in "
                                  "results.jsonl: their labels cannot be bound to what they "
                                  "judged and no estimate uses them; run the dataset again into "
                                  "the folder with --resume first")
        self.labels, self.client_ids, self._seen = read.labels, read.client_ids, mark

    def _last_seed(self) -> int:
        """The seed of the random order labelled so far (the latest random row's), else 0."""
        seeds = [lab.seed for lab in self.labels.values()
                 if lab.order == "random" and lab.seed is not None]
        return seeds[-1] if seeds else 0

    # -- metrics and orders --

    def _judge_metrics(self) -> list[str]:
        from localeval.metrics import REGISTRY

        scored = {k for r in self.records.values() for k, v in r.scores.items() if v is not None}
        built_in = [m.name for m in REGISTRY.values() if m.uses_judge and m.name in scored]
        classes = [side for side in CLASSES if self.score_key(side) in scored and any(
            claims_of(r, side) for r in self.units.values())]  # a claim's diagnosis class
        return built_in + [name for name in self._rubrics() if name in scored] + classes

    def score_key(self, metric: str) -> str:
        """The score key a view of `metric` shows, orders and estimates by: the metric's own;
        for a class label metric (labels/classes.py) the first of its VIEW_SCORES the run
        scored (every diagnosis score of its side is estimated from the labels file)."""
        if metric not in CLASSES:
            return metric
        if metric not in self._score_keys:
            scored = {k for r in self.units.values() for k, v in r.scores.items()
                      if v is not None}
            self._score_keys[metric] = next((k for k in VIEW_SCORES[metric] if k in scored),
                                            VIEW_SCORES[metric][0])
        return self._score_keys[metric]

    def _rubrics(self) -> dict[str, str]:
        """The run's rubric metrics (its metrics files: summary.json's settings) → criteria."""
        found = (self.summary.get("settings") or {}).get("rubrics") or []
        return {r["name"]: (r.get("criteria") or {}).get("en", "")
                for r in found if isinstance(r, dict) and isinstance(r.get("name"), str)}

    def view(self, metric: str) -> MetricView:
        if metric not in self.metrics:
            raise UsageError(f"--metric {metric}: not a judge metric this run scored; choose "
                             f"one of {', '.join(self.metrics)}")
        if metric in self.views:
            return self.views[metric]
        score = self.score_key(metric)
        population = self._population(metric)
        has_claims = any(claims_of(r, metric) for r in population)
        ids = [r.id for r in population if r.scores.get(score) is not None
               and (not has_claims or claims_of(r, metric))]
        shuffled = list(ids)
        random.Random(self.seed).shuffle(shuffled)
        where = {i: n for n, i in enumerate(ids)}
        informative = sorted(ids, key=lambda i: (self._closeness(self.units[i], metric),
                                                 where[i]))
        view = MetricView(metric, ids, has_claims, shuffled, informative,
                          [self.units[i].scores[score] for i in ids],  # type: ignore[misc]
                          score=score)
        view.position = {o: {i: n for n, i in enumerate(view.order(o))} for o in ORDERS}
        self.views[metric] = view
        return view

    def _population(self, metric: str) -> list[SampleRecord]:
        """What `metric` is labelled on, in results order: each row, and for a conversation
        whose score of it is a mean over its assistant turns, each of those turns."""
        out: list[SampleRecord] = []
        for r in self.records.values():
            found = self.turns.get(r.id)
            out += found if found and per_turn(r, self.score_key(metric)) else [r]
        return out

    def _description(self, metric: str) -> str:
        from localeval.metrics import REGISTRY

        if metric in CLASSES:
            return (f"the diagnosis class of each claim of the "
                    f"{'ground truth' if metric == TRUTH_CLAIMS else 'answer'} "
                    f"({', '.join(CLASSES[metric])}); the classes give every diagnosis score "
                    "of the sample")
        if metric in REGISTRY:
            return REGISTRY[metric].description
        return self._rubrics().get(metric, "")

    def tau_for(self, record: SampleRecord) -> float | None:
        return self.tau.get(record.language, self.tau.get("en"))

    def _closeness(self, record: SampleRecord, metric: str) -> float:
        """How far the judge was from undecided: min |P − τ| over the claims; |score − 0.5|
        without claims (or P)."""
        tau = self.tau_for(record)
        claims = claims_of(record, metric) or []
        ps = [_number(c.get("p_supported")) for c in claims]
        found = [abs(p - tau) for p in ps if p is not None and tau is not None]
        if found:
            return min(found)
        score = record.scores.get(self.score_key(metric))
        return abs(score - 0.5) if score is not None else 1.0

    # -- a sample's labels --

    def _marks(self, metric: str, sid: str, n_claims: int | None) -> dict[str, Label]:
        """Its labels for `metric`: "sample" and, per claim, the claim's index as text."""
        out = {}
        whole = self.labels.get((sid, metric, None))
        if whole is not None:
            out["sample"] = whole
        for i in range(n_claims or 0):
            found = self.labels.get((sid, metric, i))
            if found is not None:
                out[str(i)] = found
        return out

    def status(self, view: MetricView, sid: str) -> str:
        """"none", "partial" (some claims), "random" or "informative" (labelled in full, every
        label drawn at random / some in the informative order)."""
        n = len(claims_of(self.units[sid], view.name) or []) if view.claims else 0
        marks = self._marks(view.name, sid, n)
        full = "sample" in marks or (view.claims and len(marks) == n)
        if not full:
            return "partial" if marks else "none"
        return "random" if all(m.random for m in marks.values()) else "informative"

    def human_value(self, view: MetricView, sid: str) -> float | None:
        """The person's value of the sample's score: its sample label, else the mean of its
        claim labels when every claim is labelled and none is unsure (as labels/estimate.py
        reads the file); None otherwise."""
        n = len(claims_of(self.units[sid], view.name) or []) if view.claims else 0
        marks = self._marks(view.name, sid, n)
        if "sample" in marks:
            return marks["sample"].label
        labels = [m.label for m in marks.values()]
        if not view.claims or len(labels) < n or None in labels:
            return None
        if view.name in CLASSES:  # the person's classes: their value of the view's score
            return share(view.score, [m.klass or "" for m in marks.values()])
        return sum(labels) / n  # type: ignore[arg-type]

    def frontier(self, view: MetricView) -> int:
        """The random order's first sample not labelled in full as a random draw."""
        for n, sid in enumerate(view.random_order):
            if self.status(view, sid) != "random":
                return n
        return len(view.random_order)

    # -- what the page asks --

    def state(self, metric: str) -> dict[str, Any]:
        with self._lock:
            self._reload()
            view = self.view(metric)
            statuses = [self.status(view, i) for i in self._labelled(view)]
            claims_done = sum(1 for k in self.labels if k[1] == metric and k[2] is not None
                              and k[0] in view.position["random"])
            first_open = next((n for n, i in enumerate(view.informative_order)
                               if self.status(view, i) in ("none", "partial")),
                              len(view.ids))
            return {
                "kind": "run",
                "run": str(self.run_dir),
                "metric": metric,
                "metrics": [{"name": m, "claims": self.view(m).claims} for m in self.metrics],
                "description": self._description(metric),
                "claims": view.claims,
                "classes": list(CLASSES[metric]) if metric in CLASSES else None,
                "score_key": view.score,
                "seed": self.seed,
                "who": self.who,
                "language": self.language,
                "labels_file": str(self.path),
                "notes": self.notes + ([self.dataset_note] if self.dataset_note else []),
                "total": len(view.ids),
                "random_done": statuses.count("random"),
                "frontier": self.frontier(view),
                "informative_done": statuses.count("informative"),
                "informative_start": first_open,
                "claims_labelled": claims_done,
                "interval": self.interval(view),
            }

    def item(self, metric: str, order: str, pos: int) -> dict[str, Any]:
        if order not in ORDERS:
            raise UsageError(f"order must be one of {', '.join(ORDERS)}")
        with self._lock:
            self._reload()
            view = self.view(metric)
            ids = view.order(order)
            if not 0 <= pos < len(ids):
                raise UsageError(f"position {pos} is outside the {len(ids)} samples")
            frontier = self.frontier(view)
            if order == "random" and pos > frontier:
                raise UsageError("the random order is labelled in sequence: label sample "
                                 f"{frontier + 1} first")
            record = self.units[ids[pos]]
            return {"pos": pos, "order": order, "metric": metric, "frontier": frontier,
                    "status": self.status(view, record.id), **self._show(view, record)}

    def _show(self, view: MetricView, record: SampleRecord) -> dict[str, Any]:
        metric = view.name
        claims = claims_of(record, metric) or [] if view.claims else []
        row = self._row(record)
        contexts: list[str] = list(row.get("contexts") or []) if row else []
        shown = []
        classes = diagnosis_classes(record, truth_side=metric in ("context_recall",
                                                                  TRUTH_CLAIMS))
        marks: list[tuple[str, int, str]] = []
        for i, c in enumerate(claims):
            closest = c.get("closest_sentence") if isinstance(c.get("closest_sentence"),
                                                              str) else ""
            passages = [p for p in c.get("evidence_passages") or [] if isinstance(p, str)]
            marks += [(closest, i, "c")] + [(p, i, "p") for p in passages]
            shown.append({
                "i": i, "text": c["statement"], "sentence": c.get("sentence"),
                "verdict": c.get("verdict"), "judge_verdict": c.get("judge_verdict"),
                "p": _number(c.get("p_supported")), "reason": c.get("reason"),
                "rule": c.get("rule"), "novel": c.get("novel_details") or [],
                "evidence": closest,
                "evidence_found": any(found_in(t, closest) for t in contexts),
                "class": classes.get(c["statement"]),
            })
        marked = self._marks(metric, record.id, len(claims))
        turn = self._turn(record.id)
        return {
            **turn,
            "id": record.id, "input_hash": record.input_hash or None,
            "language": record.language, "question": record.question,
            "answer": record.answer, "ground_truth": (row or {}).get("ground_truth"),
            "score": record.scores.get(view.score),
            "weighted": record.scores.get(view.score + WEIGHTED),
            "tau": self.tau_for(record), "claims": shown,
            "reason": (record.details.get(metric) or {}).get("reason")
            if isinstance(record.details.get(metric), dict) else None,
            "contexts": [segments(t, marks) for t in contexts] if row else None,
            "context_note": None if row else self._missing_context(record),
            "marks": {k: {"label": m.label, "note": m.note, "order": m.order,
                          **({"class": m.klass} if metric in CLASSES else {})}
                      for k, m in marked.items()},
        }

    def _turn(self, uid: str) -> dict[str, Any]:
        """For a conversation's turn: the conversation's id, the turn's number, and the
        conversation before the turn (`history`: role and content per message, from the dataset
        when it is there, else from the turns the run scored); {} for a row."""
        if uid not in self.turn_of:
            return {}
        cid, number = self.turn_of[uid]
        row = self._row(self.records[cid])
        if row is not None and row.get("turns") is not None:
            before = [m for m in row["turns"] if m["number"] < number]
        else:
            before, asked = [], None
            for entry in self.records[cid].details.get("turns") or []:
                if not isinstance(entry, dict) or not isinstance(entry.get("turn"), int) or (
                        entry["turn"] >= number):
                    continue
                if isinstance(entry.get("asked"), str) and entry.get("asked_turn") != asked:
                    before.append({"role": "user", "content": entry["asked"]})
                    asked = entry.get("asked_turn")
                before.append({"role": "assistant", "content": entry.get("answer") or ""})
            last = next((e for e in self.records[cid].details.get("turns") or []
                         if isinstance(e, dict) and e.get("turn") == number), {})
            if isinstance(last.get("asked"), str) and last.get("asked_turn") != asked:
                before.append({"role": "user", "content": last["asked"]})
        return {"conversation": cid, "turn": number,
                "history": [{"role": m["role"], "content": m["content"]} for m in before]}

    # -- the dataset (the contexts are not in results.jsonl) --

    def _open_dataset(self, data: Path | None) -> tuple[dict[str, Any] | None, str | None]:
        """The run's rows by id (their contexts and ground truth), from `data` or the dataset
        summary.json names; a row whose content changed since the run is left out."""
        from localeval.data.conversation import turn_id, turns_of
        from localeval.data.dataset import input_hash, load
        from localeval.errors import DatasetError

        source = data or (self.summary.get("dataset") or {}).get("source")
        if not source or source == "<rows>":
            return None, ("the contexts are not shown: the run does not name its dataset file; "
                          "give it with --data FILE")
        path = Path(source)
        try:
            loaded = load(path)
        except DatasetError as exc:
            if data is not None:
                raise
            return None, (f"the contexts are not shown: {exc}; give the run's dataset with "
                          "--data FILE")
        rows, changed = {}, 0
        for sample in loaded.samples:
            record = self.records.get(sample.id)
            if record is None:
                continue
            if record.input_hash and record.input_hash != input_hash(sample):
                changed += 1
                continue
            rows[sample.id] = {"contexts": sample.contexts, "ground_truth": sample.ground_truth}
            if sample.id in self.turns:  # a conversation: its messages, each turn's contexts
                said = turns_of(sample.value("turns"))
                rows[sample.id]["turns"] = [
                    {"role": t.role, "content": t.content, "number": t.number} for t in said]
                rows.update((turn_id(sample.id, t.number), {
                    "contexts": list(t.contexts or []), "ground_truth": t.ground_truth})
                    for t in said if t.role == "assistant")
        note = (f"{changed} row(s) of {path} changed since the run: their contexts are not shown"
                if changed else None)
        return rows, note

    def _row(self, record: SampleRecord) -> dict[str, Any] | None:
        return None if self.dataset is None else self.dataset.get(record.id)

    def _missing_context(self, record: SampleRecord) -> str:
        if self.dataset is None:
            return self.dataset_note or "no dataset"
        return "this sample's row is not in the dataset as the run read it (changed or removed)"

    # -- marking --

    def mark(self, metric: str, order: str, sid: str, claim: int | None, label: Any,
             note: str | None, *, seen: dict[str, str | None] | None = None,
             client_id: str | None = None) -> dict[str, Any]:
        """Append one label (module doc: which order it counts in) and return the new state.
        `seen`: the input_hash (and claim text) the page showed; a mark sent late (after a
        restart) for a sample that changed since is refused, never bound to the new content.
        `client_id`: the page's id of the mark; a mark whose id is in the labels file already
        (sent again after a request that timed out but was written) appends nothing."""
        with self._lock:
            self._reload()
            view = self.view(metric)
            if client_id is not None and client_id in self.client_ids:
                return {**self.state(metric), "already_saved": True}
            self._check_mark(view, order, sid, claim, label)
            self._check_seen(metric, sid, claim, seen or {})
            drawn = order
            if order == "informative":
                n = len(claims_of(self.units[sid], metric) or []) if view.claims else 0
                earlier = self._marks(metric, sid, n).values()
                if earlier and all(m.random for m in earlier):
                    drawn = "random"  # a correction of a sample drawn at random
            if metric in CLASSES:  # a class label: the class, label 1 (null: unsure)
                self._append(metric, sid, claim, None if label is None else 1.0, drawn, note,
                             client_id, klass=label)
            else:
                self._append(metric, sid, claim, None if label is None else float(label),
                             drawn, note, client_id)
            return self.state(metric)

    def confirm(self, metric: str, sid: str) -> dict[str, Any]:
        """The random order reached a sample labelled in the informative order: its marks, as
        shown, count as the random draw's (each appended again with order "random")."""
        with self._lock:
            self._reload()
            view = self.view(metric)
            if sid not in view.position["random"]:
                raise UsageError(f"sample {sid!r} is not among the samples of {metric}")
            if view.position["random"][sid] > self.frontier(view):
                raise UsageError("the random order is labelled in sequence")
            n = len(claims_of(self.units[sid], metric) or []) if view.claims else 0
            marks = self._marks(metric, sid, n)
            full = "sample" in marks or (view.claims and len(marks) == n)
            if not full:
                raise UsageError(f"sample {sid!r} is not labelled in full; mark every claim")
            for key, m in marks.items():
                if not m.random:
                    claim = None if key == "sample" else int(key)
                    self._append(metric, sid, claim, m.label, "random", m.note,
                                 klass=m.klass)
            return self.state(metric)

    def _check_mark(self, view: MetricView, order: str, sid: str, claim: int | None,
                    label: Any) -> None:
        if order not in ORDERS:
            raise UsageError(f"order must be one of {', '.join(ORDERS)}")
        if sid not in view.position["random"]:
            raise UsageError(f"sample {sid!r} is not among the samples of {view.name}")
        allowed: tuple[Any, ...] = CLAIM_LABELS if claim is not None else SAMPLE_LABELS
        if view.name in CLASSES:  # a claim's class, or null for unsure
            allowed = (*CLASSES[view.name], None)
        if label not in allowed or isinstance(label, bool):
            raise UsageError(f"label must be one of {', '.join(map(str, allowed))} "
                             "(null = unsure)")
        if view.claims:
            n = len(claims_of(self.units[sid], view.name) or [])
            if claim is None or not 0 <= claim < n:
                raise UsageError(f"{view.name} is labelled per claim: claim must be 0 to {n - 1}")
        elif claim is not None:
            raise UsageError(f"{view.name} has no claims: label the sample (claim null)")
        if order == "random" and view.position["random"][sid] > self.frontier(view):
            raise UsageError("the random order is labelled in sequence: label the samples "
                             "before this one first")

    def _check_seen(self, metric: str, sid: str, claim: int | None,
                    seen: dict[str, str | None]) -> None:
        now_bound = binding(self.content[sid], metric, claim)
        what = {"input_hash": "answer", "statement": "claim", "turn_text": "turn's reply"}
        for key, name in what.items():
            if seen.get(key) is not None and seen[key] != now_bound.get(key):
                raise UsageError(f"sample {sid!r} changed since the page showed it (its "
                                 f"{name} is not the one marked): reload the page and mark it "
                                 "again")

    def _append(self, metric: str, sid: str, claim: int | None, label: float | None,
                order: str, note: str | None, client_id: str | None = None, *,
                klass: str | None = None) -> None:
        of, turn = self.turn_of.get(sid, (sid, None))  # a turn: its conversation's id
        try:
            row = Label(id=of, turn=turn, metric=metric, claim=claim, label=label, order=order,
                        who=self.who, when=now(), note=(note or "").strip() or None,
                        seed=self.seed if order == "random" else None, run=self.fingerprint,
                        client_id=client_id, **binding(self.content[sid], metric, claim),
                        **({"class": klass} if klass is not None else {}))
        except ValidationError as exc:
            where, msg = first_error(exc, "mark")
            raise UsageError(f"{where}: {msg}") from None
        try:
            append_label(self.path, row)
        except OSError as exc:
            raise OutputError(f"not saved: cannot write {self.path}: {exc.strerror or exc}; "
                              "the marks written before are kept") from None
        self.labels[row.key] = row
        if client_id is not None:
            self.client_ids.add(client_id)
        with contextlib.suppress(OSError):
            st = os.stat(self.path)
            self._seen = (st.st_size, st.st_mtime_ns)

    # -- the estimate so far --

    def _labelled(self, view: MetricView) -> list[str]:
        """The samples of `view` with a label of its metric, in the random order."""
        where = view.position["random"]
        found = {k[0] for k in self.labels if k[1] == view.name and k[0] in where}
        return sorted(found, key=where.__getitem__)

    def interval(self, view: MetricView) -> dict[str, Any] | None:
        """The labels drawn at random so far, and the prediction-powered and labels-only 95 %
        intervals of the metric's mean from them (labels/ppi.py); `unsure`: the samples drawn
        and marked unsure, left out (the labels are then no uniform draw); `unit`: what the
        mean is over (labels/estimate.unit_of)."""
        drawn = [i for i in self._labelled(view) if self.status(view, i) == "random"]
        labelled = [(self.units[i].scores[view.score], y) for i in drawn
                    if (y := self.human_value(view, i)) is not None]
        kinds = {"turn" if i in self.turn_of else "conversation" if i in self.turns else "row"
                 for i in view.ids}
        out: dict[str, Any] = {"n_labels": len(labelled), "n_rows": len(view.ids),
                               "unsure": len(drawn) - len(labelled), "unit": unit_of(kinds)}
        judge_all = view.judge_scores
        out["judge_mean"] = sum(judge_all) / len(judge_all) if judge_all else None
        if len(labelled) < 2:
            return out
        from localeval.errors import LabelsError
        from localeval.labels.ppi import ppi_mean

        try:
            est = ppi_mean(judge_all, [f for f, _ in labelled], [y for _, y in labelled])
        except LabelsError as exc:
            out["problem"] = str(exc)
            return out
        out.update(mean=est.mean, ci=list(est.ci), labels_only_mean=est.labels_only_mean,
                   labels_only_ci=list(est.labels_only_ci), judge_mean=est.judge_mean,
                   effective_labels=est.effective_labels, lam=est.lam)
        return out
