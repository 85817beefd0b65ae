"""meta-eval end to end: labelled data → rows → the normal run path (runner.run: same loader,
metrics, judge, answer cache, results folder, --resume) → agreement figures → meta_eval.json,
meta_eval.md and meta_eval.html in the run folder."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from localeval import __version__
from localeval.config import Settings
from localeval.errors import UsageError
from localeval.meta_eval import analyse, checks
from localeval.meta_eval.formats import LabelledData, LabelledRow, Pair, load, runner_rows
from localeval.results import (
    RESULTS_FILE,
    RunInterrupted,
    SampleRecord,
    load_run,
    read_results,
    write_json,
)

JSON_FILE = "meta_eval.json"
MD_FILE = "meta_eval.md"
HTML_FILE = "meta_eval.html"


class Session(BaseModel):
    """One invocation of meta-eval on the folder (a --resume adds one)."""

    finished_at: str
    elapsed_s: float = Field(description="wall time of the run path, model loading included")
    samples: int = Field(description="rows judged in this session (not from earlier ones)")
    interrupted: bool = False
    judge: dict[str, int] | None = None


class Status(BaseModel):
    complete: bool
    done: int = Field(description="pairs (both sides) or rows judged")
    selected: int = Field(description="pairs or rows chosen for judging (after --limit)")
    in_file: int = Field(description="usable pairs or rows in the file")
    no_preference: int = Field(0, description="pairs people marked 'tie' in the file: not judged")
    input_errors: list[str] = Field(default_factory=list)


class MetaEvalResult(BaseModel):
    """What meta_eval.json holds."""

    localeval_version: str = __version__
    kind: Literal["pairs", "rows"]
    data: str
    score: str
    metrics: list[str]
    tie_rule: str = analyse.TIE_RULE
    status: Status
    groups: dict[str, analyse.PairStats] | dict[str, analyse.RowStats] = Field(
        description="'all', then one entry per language"
    )
    seconds_per_sample: float | None = Field(
        None,
        description="wall seconds per row judged over the recorded sessions (cached "
        "answers make it smaller: see judge.cached)",
    )
    judge: dict[str, int] = Field(default_factory=dict, description="totals over the sessions")
    sessions: list[Session] = Field(default_factory=list)
    models: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)
    pairs: list[analyse.PairResult] | None = None
    rows: list[analyse.RowResult] | None = None
    disagreements: list[str] = Field(default_factory=list, description="pair or row ids")


@dataclass
class MetaEvalOutcome:
    result: MetaEvalResult
    records: dict[str, SampleRecord]
    files: list[Path]
    interrupted: RunInterrupted | None = None


def select(data: LabelledData, limit: int | None) -> list[Pair] | list[LabelledRow]:
    """The first `limit` pairs that carry a preference (or the first `limit` rows)."""
    if limit is not None and limit < 1:
        raise UsageError("--limit must be 1 or more")
    if data.kind == "pairs":
        pairs = [p for p in data.pairs if p.preferred != "tie"]
        return pairs[:limit] if limit is not None else pairs
    return data.rows[:limit] if limit is not None else list(data.rows)


def _previous_sessions(out_dir: Path) -> list[Session]:
    try:
        stored = json.loads((out_dir / JSON_FILE).read_text(encoding="utf-8"))
        return [Session.model_validate(s) for s in stored.get("sessions") or []]
    except (OSError, ValueError, AttributeError, TypeError, ValidationError, RecursionError):
        return []


def _check_no_drop(out_dir: Path, rows: list[dict[str, Any]]) -> None:
    """--resume must not shrink the selection: the runner would drop judged rows."""
    wanted = {r["id"] for r in rows}
    gone = [r.id for r in read_results(out_dir / RESULTS_FILE).records if r.id not in wanted]
    if gone:
        raise UsageError(
            f"resuming in {out_dir} with this data and --limit would drop {len(gone)} judged "
            f"row(s) (e.g. {gone[0]}); give the same data and the same or a larger --limit, "
            "or a new --out"
        )


def _check_score_key(records: list[SampleRecord], score: str) -> None:
    """A --score key that no row has (e.g. a sub-score the metric does not give) is a usage
    error, not a set of losses."""
    from localeval.names import owner_of

    owner = owner_of(score)
    given = sorted({k for r in records for k in r.scores if owner_of(k) == owner})
    if given and score not in given:
        raise UsageError(
            f"--score {score!r}: no row has this score; {owner} gives {', '.join(given)}. "
            "Run again with --resume and another --score (nothing is judged again)"
        )


def _session(summary: dict[str, Any], total: int, interrupted: bool) -> Session:
    earlier = (summary.get("resumed") or {}).get("samples_from_earlier_sessions", 0)
    judge = summary.get("judge")
    keys = ("calls", "cached", "failures", "prompt_tokens", "prompt_tokens_processed",
            "completion_tokens", "forced_tokens")
    return Session(
        finished_at=summary.get("finished_at")
        or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        elapsed_s=float(summary.get("elapsed_s") or 0.0),
        samples=max(0, total - int(earlier)),
        interrupted=interrupted,
        judge={k: int(judge.get(k) or 0) for k in keys} if judge else None,
    )


def evaluate(
    data: Path,
    out_dir: Path,
    settings: Settings,
    *,
    score: str | None = None,
    limit: int | None = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = False,
    log: Callable[[str], None] | None = None,
    judge: Any = None,
    embedder: Any = None,
) -> MetaEvalOutcome:
    """Judge the labelled data through runner.run into out_dir and measure the agreement.
    Ctrl-C keeps what is done: the figures are written for it and `interrupted` is set."""
    from localeval.metrics import resolve
    from localeval.names import owner_of
    from localeval.runner import run

    names = settings.metrics or ([owner_of(score)] if score else None)
    if not names:
        raise UsageError("meta-eval needs --metrics or --score (the score key that decides)")
    metric_names = [m.name for m in resolve(names, settings.rubrics)]
    score = score or metric_names[0]
    if owner_of(score) not in metric_names:
        raise UsageError(
            f"--score {score!r} is not produced by the metrics run ({', '.join(metric_names)}); "
            f"add {owner_of(score)!r} to --metrics or choose another --score"
        )
    settings = settings.model_copy(update={"metrics": metric_names})
    labelled = load(data)
    for problem in labelled.problems:
        if log:
            log(f"skipped input {problem}")
    items = select(labelled, limit)
    if not items:
        raise UsageError(f"{data} holds no pair with a human preference to judge")
    rows = runner_rows(items)
    out_dir = Path(out_dir)
    sessions: list[Session] = []
    if resume:
        _check_no_drop(out_dir, rows)
        sessions = _previous_sessions(out_dir)
    elif overwrite:
        for name in (JSON_FILE, MD_FILE, HTML_FILE):
            (out_dir / name).unlink(missing_ok=True)
    interrupted: RunInterrupted | None = None
    try:
        outcome = run(
            rows,
            out_dir,
            settings,
            judge=judge,
            embedder=embedder,
            progress=progress,
            log=log,
            resume=resume,
            overwrite=overwrite,
        )
        records, summary = outcome.records, outcome.summary
    except RunInterrupted as exc:
        interrupted, summary = exc, exc.summary
        records = load_run(out_dir).records
    sessions.append(_session(summary, len(records), interrupted is not None))
    _check_score_key(records, score)
    by_id = {r.id: r for r in records}
    result = measure(labelled, items, by_id, score, metric_names, sessions, summary)
    from localeval.report.meta_eval_page import write_reports

    write_json(out_dir / JSON_FILE, result.model_dump(mode="json"))
    files = [out_dir / JSON_FILE, *write_reports(out_dir, result, by_id)]
    if checks.record(result, out_dir) and log:
        log(f"recorded in {checks.checks_path()}: {', '.join(result.metrics)} checked with this "
            "judge (gates with --advisory-until-checked now count)")
    elif log and result.status.complete and checks.judged(result) < checks.MIN_CHECKED:
        log(f"not recorded as a check of this judge: {checks.judged(result)} judged, fewer than "
            f"{checks.MIN_CHECKED} (gates with --advisory-until-checked stay advisory)")
    return MetaEvalOutcome(result=result, records=by_id, files=files, interrupted=interrupted)


def measure(
    labelled: LabelledData,
    items: list[Pair] | list[LabelledRow],
    records: dict[str, SampleRecord],
    score: str,
    metric_names: list[str],
    sessions: list[Session],
    summary: dict[str, Any],
) -> MetaEvalResult:
    """The agreement figures of the records judged so far."""
    from localeval.names import owner_of

    owner = owner_of(score)
    pairs = [i for i in items if isinstance(i, Pair)]
    rows = [i for i in items if isinstance(i, LabelledRow)]
    if labelled.kind == "pairs":
        pair_res = analyse.pair_results(pairs, records, score, owner)
        groups: Any = analyse.by_group(
            [r for r in pair_res if r.outcome is not None], analyse.pair_stats
        )
        done = groups[analyse.ALL].pairs
        wrong = [r.pair_id for r in analyse.pair_disagreements(pair_res)]
        row_res = None
    else:
        row_res = analyse.row_results(rows, records, score, owner)
        groups = analyse.by_group([r for r in row_res if r.done], analyse.row_stats)
        done = groups[analyse.ALL].rows
        wrong = [r.id for r in analyse.row_disagreements(row_res)]
        pair_res = None
    samples = sum(s.samples for s in sessions)
    elapsed = sum(s.elapsed_s for s in sessions if s.samples)
    totals: dict[str, int] = {}
    for s in sessions:
        for k, v in (s.judge or {}).items():
            totals[k] = totals.get(k, 0) + v
    status = Status(
        complete=done == len(items),
        done=done,
        selected=len(items),
        in_file=len(labelled.pairs) if labelled.kind == "pairs" else len(labelled.rows),
        no_preference=sum(p.preferred == "tie" for p in labelled.pairs),
        input_errors=[str(p) for p in labelled.problems],
    )
    return MetaEvalResult(
        kind=labelled.kind,
        data=labelled.source,
        score=score,
        metrics=metric_names,
        status=status,
        groups=groups,
        seconds_per_sample=round(elapsed / samples, 3) if samples else None,
        judge=totals,
        sessions=sessions,
        models=summary.get("models") or {},
        settings=summary.get("settings") or {},
        pairs=pair_res,
        rows=row_res,
        disagreements=wrong,
    )
