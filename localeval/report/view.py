"""What a report shows, computed once from a run's records and summary; the Markdown and HTML
renderers only lay it out. With it, what a report shows of human labels and calibration, read
from summary.json: the corrected figure beside the judge's (summary["labels"], written by
localeval.labels.attach when the run folder holds labels.jsonl) and the judge's calibration note
(summary["calibration"])."""

from __future__ import annotations

import json
from array import array
from bisect import insort
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.names import DIAGNOSIS_METRICS, same_as_headline, same_note
from localeval.report.kit import fmt, fmt_ci, verdict_keys_of
from localeval.results.folder import RunFolder
from localeval.results.records import SampleRecord
from localeval.safe import unicode_safe

CORRECTED_HEADER = ["score", "judge alone", "corrected", "95% CI", "labels only",
                    "95% CI (labels)", "labels / rows", "labels worth"]
CORRECTED_NOTE = (
    "Corrected = the judge's scores on every row plus human labels on a uniform random "
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


LOWEST = 5  # samples listed per metric
ROWS_KEPT = 200  # error rows a view keeps: the most a report shows (HTML 200, Markdown 50)
BINS = 10
HEADERS = {
    "overview": ["score", "mean", "95% CI", "n scored", "unscored", "errors", "skipped"],
    "errors": ["id", "line", "metric", "error"],
    "problems": ["line", "id", "problem"],
    "models": ["role", "name", "sha256", "path", "note"],
    "prompts": ["template", "sha256"],
    "settings": ["setting", "value"],
    "run": ["item", "value"],
    "rubrics": ["score", "mean", "scale", "better", "criteria"],
}
RUBRICS_NOTE = (
    "Each rubric's score is the judge's probability-weighted level normalised to [0, 1] "
    "(`.weighted`, the same; `.greedy`: its greedy level), graded on these criteria."
)
SCORES_NOTE = (
    "Mean per score with a percentile bootstrap 95% confidence interval "
    "(2,000 resamples of the scored samples)."
)


def histogram(values: Iterable[float]) -> list[int]:
    counts = [0] * BINS
    for v in values:
        counts[min(BINS - 1, max(0, int(min(max(v, 0.0), 1.0) * BINS)))] += 1
    return counts


def lowest_keys(metrics: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(score key, owner) to list the lowest samples of: one key per metric (its main score when
    it has one), and the first retrieval figure."""
    from localeval.metrics import group_of

    chosen: dict[str, tuple[str, str]] = {}  # group → (key, owner)
    for key, m in metrics.items():
        owner = m.get("metric", key)
        if m.get("count", 0) == 0:
            continue
        group = "retrieval" if group_of(owner) == "retrieval" else owner  # one list for all figures
        if group not in chosen or (key == owner and group != "retrieval"):
            chosen[group] = (key, owner)
    return list(chosen.values())


@dataclass
class Distribution:
    key: str
    values: Sequence[float]
    counts: list[int]
    mean: float | None
    ci95: list[float] | None
    count: int
    errors: int


@dataclass
class LowSample:
    id: str
    line: int
    score: float
    question: str | None
    answer: str | None
    also: list[str]  # "key = value" of the metric's other scores
    details: Any  # the metric's details, or None


@dataclass
class LowList:
    key: str
    samples: list[LowSample]
    verdict_keys: frozenset[str] = frozenset()
    """The 0/1 keys of the owner metric's details (kit.verdict_keys_of), when they are shown."""


CHATS_KEPT = 20
"""Conversations a report draws as a chat (the first ones, in input order)."""


@dataclass
class ChatTurn:
    """One exchange of a conversation: the user message (and its standalone question, when
    rewritten), the assistant reply with its scores, and what failed on it."""

    turn: int
    asked: str | None
    standalone: str | None
    answer: str
    scores: list[str]
    failed: list[str]


@dataclass
class Chat:
    """A conversation drawn as a chat: its conversation metrics' scores, its exchanges."""

    id: str
    line: int
    scores: list[str]
    turns: list[ChatTurn]


def _turn_number(value: Any) -> int:
    """A turn's number as a record holds it; 0 for anything else (a hand-edited results.jsonl
    draws, never stops the report)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def chat_of(r: SampleRecord) -> Chat:
    """The chat of a conversation's record (localeval/conversation.py wrote `details.turns`):
    per assistant turn its main scores, the claims its contexts and the user left unsupported,
    and the conversation metrics' failed verdicts with their reasons."""
    failed: dict[int, list[str]] = {}
    for name, key in (("knowledge_retention", "retained"), ("conversation_completeness", "met")):
        for e in (r.details.get(name) or {}).get("turns") or []:
            if isinstance(e, Mapping) and e.get(key) == 0 and e.get("request", 1) == 1:
                failed.setdefault(_turn_number(e.get("turn")), []).append(
                    f"{name}: ✗ {e.get('reason', '')}".rstrip())
    turns = []
    for t in r.details.get("turns") or []:
        if not isinstance(t, Mapping):
            continue
        number = _turn_number(t.get("turn"))
        scores = [f"{k} = {fmt(v)}" for k, v in (t.get("scores") or {}).items() if "." not in k]
        claims = ((t.get("details") or {}).get("faithfulness") or {}).get("statements") or []
        lost = [f"unsupported: {c.get('statement')}" for c in claims
                if isinstance(c, Mapping) and c.get("verdict") == 0]
        asked_at = t.get("asked_turn")  # the user message it answers
        notes = (failed.get(asked_at, []) if isinstance(asked_at, int) else []) + lost
        turns.append(ChatTurn(number, t.get("asked"), t.get("standalone") if t.get("rewritten")
                              else None, str(t.get("answer") or ""), scores,
                              notes + failed.get(number, [])))
    own = [f"{k} = {fmt(v)}" for k, v in r.scores.items()
           if k in ("knowledge_retention", "conversation_completeness")]
    return Chat(r.id, r.line, own, turns)


@dataclass
class ReportView:
    title: str
    source: str
    n_records: int
    finished_at: str | None
    status: str | None
    overview: list[list[Any]]
    forest: list[tuple[str, float | None, list[float] | None]]
    distributions: list[Distribution]
    lowest: list[LowList]
    errors: list[list[Any]]  # the first ROWS_KEPT
    n_errors: int  # all of them
    problems: list[list[Any]]
    meta: dict[str, list[list[Any]]] = field(default_factory=dict)
    corrected: list[list[Any]] = field(default_factory=list)  # report/view.py
    corrected_lines: list[str] = field(default_factory=list)
    calibration: str | None = None
    rubrics: list[list[Any]] = field(default_factory=list)
    """Each rubric's score beside its criteria (en, and zh when it differs)."""
    shield: str | None = None
    """How many samples the shield flagged, overall and per metric (`shield_note`)."""
    same: str | None = None
    """The line naming the `.weighted` / `.greedy` scores left out of the tables and charts as
    their headline's twins (names.same_as_headline)."""
    diagnosis: Any = None
    """report/diagnosis.RunDiagnosis: the run's claims by class, when it ran those metrics."""
    chats: list[Chat] = field(default_factory=list)
    """The first CHATS_KEPT conversations, drawn as chats."""


def build_view(run: RunFolder) -> ReportView:
    return view_of(Path(run.path), run.summary, run.records)


def view_of(path: Path, s: Mapping[str, Any], records: Iterable[SampleRecord]) -> ReportView:
    """The view of a run from its summary and its records in input order, read in one pass that
    keeps per score its values (8-byte doubles), its LOWEST records and ROWS_KEPT error rows."""
    hidden = same_as_headline(s.get("metrics") or {})
    metrics: Mapping[str, Mapping[str, Any]] = {
        k: m for k, m in (s.get("metrics") or {}).items() if k not in hidden}
    dataset = s.get("dataset") or {}
    columns = {key: array("d") for key in metrics}
    lows: dict[str, list[tuple[tuple[float, int, int], SampleRecord]]] = {
        key: [] for key, _ in lowest_keys(metrics)}
    errors: list[list[Any]] = []
    flagged: dict[str, int] = {}
    n = n_errors = n_flagged = 0
    diagnosis = None
    if set(DIAGNOSIS_METRICS) & set(metrics):  # the diagnosis section
        from localeval.report.diagnosis import RunDiagnosis

        diagnosis = RunDiagnosis()
    chats: list[Chat] = []
    for r in records:
        n += 1
        if diagnosis is not None:
            diagnosis.add_record(r.id, r.line, r.details)
        if len(chats) < CHATS_KEPT and isinstance(r.details.get("turns"), list):
            chats.append(chat_of(r))
        hit = [o for o, d in r.details.items() if isinstance(d, Mapping) and "instructions" in d]
        n_flagged += bool(hit)
        for owner in hit:
            flagged[owner] = flagged.get(owner, 0) + 1
        for key, column in columns.items():
            if (v := r.scores.get(key)) is not None:
                column.append(float(v))
        for key, best in lows.items():
            if (v := r.scores.get(key)) is not None and (
                    len(best) < LOWEST or (v, r.line, n) < best[-1][0]):
                insort(best, ((v, r.line, n), r))  # ties: the earlier record first
                del best[LOWEST:]
        for metric, msg in r.errors.items():
            n_errors += 1
            if len(errors) < ROWS_KEPT:
                errors.append([r.id, r.line, metric, msg])
    dists = [Distribution(key, columns[key], histogram(columns[key]), m.get("mean"), m.get("ci95"),
                          m.get("count", 0), m.get("errors", 0))
             for key, m in metrics.items() if columns[key]]
    table, table_lines = corrected(s)
    return ReportView(
        title=f"localeval report: {unicode_safe(path.name)}",
        source=str(dataset.get("source", "")),
        n_records=n,
        finished_at=s.get("finished_at"),
        status=_status(s, n),
        overview=[_overview_row(key, m) for key, m in metrics.items()],
        forest=[(k, m.get("mean"), m.get("ci95")) for k, m in metrics.items() if m.get("count")],
        distributions=dists,
        lowest=[_low_list([r for _, r in lows[key]], metrics, key, owner)
                for key, owner in lowest_keys(metrics)],
        errors=errors,
        n_errors=n_errors,
        problems=[[p.get("line"), p.get("id") or "", p.get("message")]
                  for p in dataset.get("input_errors") or []],
        meta=_metadata_rows(s),
        corrected=table,
        corrected_lines=table_lines,
        calibration=calibration_note(s),
        rubrics=_rubric_rows(s),
        shield=shield_note(n_flagged, n, flagged),
        same=same_note(hidden) if hidden else None,
        diagnosis=diagnosis,
        chats=chats,
    )


def shield_note(n_flagged: int, n: int, by_metric: Mapping[str, int]) -> str | None:
    """The sentence counting the samples the shield flagged, when it flagged any."""
    if not n_flagged:
        return None
    each = ", ".join(f"{owner} {k}" for owner, k in by_metric.items())
    return (f"Shield: {n_flagged} of {n} samples hold text aimed at the evaluator ({each}); "
            "each of their scores is the worse of the material as given and the material "
            "without that text (details: instructions).")


def _rubric_rows(summary: Mapping[str, Any]) -> list[list[Any]]:
    """The run's rubrics (settings.rubrics) with their score's mean and their criteria."""
    metrics = summary.get("metrics") or {}
    rows = []
    for r in (summary.get("settings") or {}).get("rubrics") or []:
        if not isinstance(r, Mapping) or r.get("name") not in metrics:
            continue
        scale, criteria = r.get("scale"), r.get("criteria") or {}
        shown = criteria.get("en", "") + (
            f" / {criteria['zh']}" if criteria.get("zh") not in (None, criteria.get("en")) else "")
        rows.append([r["name"], fmt(metrics[r["name"]].get("mean")),
                     "yes/no" if scale == "yes/no" else f"{scale[0]}..{scale[1]}",
                     "higher" if r.get("higher_is_better", True) else "lower", shown])
    return rows


def _overview_row(key: str, m: Mapping[str, Any]) -> list[Any]:
    return [key, fmt(m.get("mean")), fmt_ci(m.get("ci95")), m.get("count", 0),
            m.get("unscored", 0), m.get("errors", 0), m.get("skipped", 0)]


def _low_list(
    lowest: list[SampleRecord], metrics: Mapping[str, Mapping[str, Any]], key: str, owner: str
) -> LowList:
    siblings = [k for k, m in metrics.items() if m.get("metric") == owner and k != key]
    shown = any(r.details.get(owner) is not None for r in lowest)
    return LowList(key, verdict_keys=verdict_keys_of(owner) if shown else frozenset(), samples=[
        LowSample(
            id=r.id,
            line=r.line,
            score=float(r.scores[key] or 0.0),
            question=r.question,
            answer=r.answer,
            also=[f"{k} = {fmt(r.scores.get(k))}" for k in siblings if k in r.scores],
            details=r.details.get(owner),
        )
        for r in lowest
    ])


def _status(summary: Mapping[str, Any], n_records: int) -> str | None:
    total = (summary.get("dataset") or {}).get("samples")
    if summary.get("complete") is False or (isinstance(total, int) and n_records < total):
        return (
            f"partial run: {n_records} of {total if total is not None else '?'} samples "
            "done (resume with `python -m localeval run ... --resume`)"
        )
    return None


def _metadata_rows(summary: Mapping[str, Any]) -> dict[str, list[list[Any]]]:
    models = [
        [role, info.get("name", ""), info.get("sha256", ""), info.get("path", ""),
         info.get("fallback", "")]
        for role, info in (summary.get("models") or {}).items()
        if isinstance(info, Mapping)
    ]
    cache = (summary.get("models") or {}).get("cache")
    prompts = [[name, sha] for name, sha in (summary.get("prompts") or {}).items()]
    run: list[list[Any]] = [["localeval", summary.get("localeval_version", "?")]]
    dataset = summary.get("dataset") or {}
    run.append(["dataset", f"{dataset.get('source', '?')} ({dataset.get('samples', '?')} samples)"])
    if summary.get("finished_at"):
        run.append(["finished at", summary["finished_at"]])
    if summary.get("elapsed_s") is not None:
        run.append(["elapsed", f"{summary['elapsed_s']:.1f} s"])
    if summary.get("resumed"):
        earlier = summary["resumed"].get("samples_from_earlier_sessions", 0)
        run.append(["resumed", f"{earlier} samples came from earlier sessions (elapsed and "
                               "tokens are this session's)"])
    cal = summary.get("calibration")
    if isinstance(cal, Mapping) and isinstance(cal.get("file"), Mapping):  # run --calibration
        f = cal["file"]
        run.append(["calibration", f"τ {f.get('tau')} from {f.get('path')} (sha256 "
                    f"{str(f.get('sha256'))[:12]}…), fitted on {f.get('n_answers')} labelled "
                    f"answers and {f.get('n_claims')} claim labels"])
    run += _judge_rows(summary.get("judge") or {}, summary.get("elapsed_s") or 0)
    if cache:
        run.append(["answer cache", cache])
    retrieval = summary.get("retrieval") or {}
    if retrieval.get("ndcg_gain"):
        run.append(["ndcg gain", retrieval["ndcg_gain"]])
    emb = summary.get("embedder") or {}
    if emb:
        run.append(["texts embedded", emb.get("texts_encoded", 0)])
    settings = [
        [k, json.dumps(v, ensure_ascii=False, default=str)]
        for k, v in (summary.get("settings") or {}).items()
    ]
    return {"models": models, "prompts": prompts, "run": run, "settings": settings}


def _judge_rows(judge: Mapping[str, Any], elapsed: float) -> list[list[Any]]:
    if not judge:
        return []
    asked = judge.get("calls", 0) + judge.get("cached", 0)
    hit = f" ({judge.get('cached', 0) / asked:.0%} of {asked} requests)" if asked else ""
    rows: list[list[Any]] = [
        ["judge calls", judge.get("calls", 0)],
        ["cache hits", f"{judge.get('cached', 0)}{hit}"],
        ["tokens", f"{judge.get('prompt_tokens', 0)} prompt "
                   f"({judge.get('prompt_tokens_processed', 0)} processed) / "
                   f"{judge.get('completion_tokens', 0)} generated"],
    ]
    if elapsed and judge.get("completion_tokens"):
        rows.append(["generated tokens/s", f"{judge['completion_tokens'] / elapsed:.1f}"])
    if judge.get("failures"):
        rows.append(["judge failures", judge["failures"]])
    if judge.get("calls_by_step"):
        rows.append(["calls by step",
                     ", ".join(f"{k} {v}" for k, v in judge["calls_by_step"].items())])
    if judge.get("cache_error"):
        rows.append(["cache problem", judge["cache_error"]])
    return rows
