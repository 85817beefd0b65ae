"""The Python API: `localeval.evaluate(data, metrics=..., **settings)`, and
`localeval.generate(docs, ...)` (a test set from the user's own documents, as `localeval
generate`).

The same code path as `python -m localeval run` (runner.run): the same loader, metrics, judge,
cache, results files and reports. `data` is a dataset file, a list of dicts, a pandas DataFrame,
a Hugging Face `datasets.Dataset` (or anything with `to_list()` / `to_pandas()`); ragas column
names (user_input, response, retrieved_contexts, reference, reference_contexts) are understood.
Returns an EvalResults with the per-sample records, the summary, gates and `to_pandas()`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from localeval.errors import ConfigError, LocalevalError, first_error
from localeval.names import read_key
from localeval.results.records import SampleRecord


@dataclass
class EvalResults:
    """What a run produced: `records` (one per sample, input order) and `summary` (summary.json)."""

    records: list[SampleRecord]
    summary: dict[str, Any]
    problems: list[Any] = field(default_factory=list)  # input rows that could not be loaded
    out_dir: Path | None = None

    @property
    def metrics(self) -> dict[str, dict[str, Any]]:
        """Per score key: mean, count, unscored, errors, skipped, ci95."""
        return self.summary["metrics"]

    def mean(self, key: str) -> float | None:
        """The mean of a score key (None when no sample was scored); unknown key → error; an old
        name (`faithfulness.soft`) reads the new key, with an OldScoreKeyWarning."""
        key = read_key(key, f"mean({key!r})")
        if key not in self.metrics:
            from localeval.results.gates import Gate, _unknown_key

            raise _unknown_key(Gate(key, 0.0, "mean"), list(self.metrics))
        return self.metrics[key]["mean"]

    def scores(self, key: str) -> dict[str, float | None]:
        """Sample id → score for one key (None: unscored; absent: errored or skipped)."""
        key = read_key(key, f"scores({key!r})")
        return {r.id: r.scores[key] for r in self.records if key in r.scores}

    @property
    def details(self) -> dict[str, dict[str, Any]]:
        """Sample id → metric → what the metric saw (statements, verdicts, reasons, ...)."""
        return {r.id: r.details for r in self.records}

    @property
    def calibration_note(self) -> str | None:
        """The sentence saying the judge's τ was not fitted for it (as the CLI's last line and
        the report say), when it was not; None when it was, or no score depends on τ."""
        cal = self.summary.get("calibration")
        if isinstance(cal, Mapping) and cal.get("calibrated") is False:
            return str(cal.get("note") or "τ was not fitted for this judge")
        return None

    @property
    def judge_calls(self) -> int:
        """Judge requests this run actually sent (answers from the cache not counted)."""
        judge = self.summary.get("judge") or {}
        return int(judge.get("calls", 0))

    @property
    def errors(self) -> list[tuple[str, str, str]]:
        """(sample id, metric, message) for every metric that failed on a sample."""
        return [(r.id, m, msg) for r in self.records for m, msg in r.errors.items()]

    def check(self, fail_under: Mapping[str, float], max_unscored: int = 0) -> list[str]:
        """Gate the means: one message per failed gate, [] when all pass; more than
        `max_unscored` samples without the score fail a gate too. For pytest:
        `assert not results.check({"faithfulness": 0.8})`."""
        from localeval.results import gates

        return gates.check_fail_under(gates.parse_gates(fail_under, "fail_under"), self.summary,
                                      max_unscored=max_unscored)

    def to_pandas(self, details: bool = False) -> Any:
        """One row per sample: id, line, language, question, answer, one column per score key
        (`.weighted`, `.greedy` and other sub-scores included), then `error.<metric>` /
        `skipped.<metric>` columns where any sample has one; `details=True` adds a
        `details.<metric>` column."""
        try:
            import pandas as pd
        except ImportError:
            raise LocalevalError("to_pandas() needs pandas: pip install pandas") from None
        rows, columns = self._table()
        frame = pd.DataFrame(rows, columns=columns)
        if details:
            for m in sorted({m for r in self.records for m in r.details}):
                frame[f"details.{m}"] = [r.details.get(m) for r in self.records]
        return frame

    def _table(self) -> tuple[list[dict[str, Any]], list[str]]:
        keys = list(self.metrics)
        error_cols = sorted({m for r in self.records for m in r.errors})
        skipped_cols = sorted({m for r in self.records for m in r.skipped})
        rows = []
        for r in self.records:
            row: dict[str, Any] = {
                "id": r.id,
                "line": r.line,
                "language": r.language,
                "question": r.question,
                "answer": r.answer,
            }
            row.update({k: r.scores.get(k) for k in keys})
            row.update({f"error.{m}": r.errors.get(m) for m in error_cols})
            row.update({f"skipped.{m}": r.skipped.get(m) for m in skipped_cols})
            rows.append(row)
        columns = [
            "id",
            "line",
            "language",
            "question",
            "answer",
            *keys,
            *(f"error.{m}" for m in error_cols),
            *(f"skipped.{m}" for m in skipped_cols),
        ]
        return rows, columns

    def __repr__(self) -> str:
        means = ", ".join(
            f"{k}={'-' if m['mean'] is None else format(m['mean'], '.3f')}"
            for k, m in self.metrics.items()
        )
        return f"EvalResults({len(self.records)} samples: {means})"


def evaluate(
    data: Any,
    metrics: Iterable[str] | str | None = None,
    *,
    out: str | Path | None = None,
    config: str | Path | None = None,
    judge: Any = None,
    embedder: Any = None,
    resume: bool = False,
    overwrite: bool = False,
    progress: bool = False,
    ray: Any = None,
    **settings: Any,
) -> EvalResults:
    """Evaluate a dataset file, a list of dicts, a DataFrame or a `datasets.Dataset`.

    metrics: names or groups, or Rubric objects (`localeval.rubric(...)`) (default: every
    metric the rows can feed, and every rubric). metrics_files=[...]: TOML metrics files
    (localeval/docs/rubrics.md); rubrics=[...]: Rubric objects, run with the others. out: a
    folder for results.jsonl, summary.json and the reports (none written when omitted).
    config: a TOML file. judge / embedder: a setting value ("llama", "fake"; a path) or a ready
    object with the Judge / Embedder protocol (e.g. a FakeJudge in tests; with ray, copied to
    each worker).
    ray: evaluate on Ray workers — True (a Ray instance on this machine), "auto", "HOST:PORT",
    or a dict / localeval.distributed.RayOptions (workers, cpus_per_worker, models_dir).
    **settings: any Settings field
    (profile="small", n_ctx=8192, max_tokens=512, language="zh", ...). Errors are
    LocalevalError subclasses with a message that says what to do.
    """
    from localeval.config import load_config
    from localeval.rubrics import Rubric
    from localeval.runner import run

    overrides = dict(settings)
    if isinstance(metrics, str):
        metrics = [m.strip() for m in metrics.split(",")]
    if metrics is not None:
        metrics = list(metrics)
        given = [m for m in metrics if isinstance(m, Rubric)]
        if given:  # a Rubric among the metrics: run it, by name
            overrides["rubrics"] = [*(overrides.get("rubrics") or []), *given]
        overrides["metrics"] = [m.name if isinstance(m, Rubric) else m for m in metrics]
    judge_obj = embedder_obj = None
    if isinstance(judge, str):
        overrides["judge"] = judge
    elif judge is not None:
        judge_obj = judge
    if isinstance(embedder, (str, Path)):
        overrides["embedder"] = embedder
    elif embedder is not None:
        embedder_obj = embedder
    if judge_obj is not None and not hasattr(judge_obj, "complete"):
        raise ConfigError(
            "judge= must be 'llama', 'fake' or an object with the Judge protocol "
            "(name, fingerprint, sampling_key(), async complete(request), close())"
        )
    cfg = Path(config) if config is not None else None
    resolved = load_config(cfg, {k: v for k, v in overrides.items() if v is not None})
    if resolved.names_head():  # the verifier plug-in scores the verdicts
        import localeval.verifier  # noqa: F401
    executor = None  # this process
    if ray is not None and ray is not False:  # the Ray plug-in evaluates the samples
        from localeval.distributed.executor import ray_executor

        executor = ray_executor(ray, judge=judge_obj, embedder=embedder_obj)
    out_dir = Path(out) if out is not None else None
    outcome = run(
        as_rows(data),
        out_dir,
        resolved,
        judge=judge_obj,
        embedder=embedder_obj,
        executor=executor,
        progress=progress,
        resume=resume,
        overwrite=overwrite,
    )
    results = EvalResults(
        records=outcome.records,
        summary=outcome.summary,
        problems=list(outcome.dataset.problems),
        out_dir=out_dir,
    )
    note = results.calibration_note
    judge_id = str(((outcome.summary.get("models") or {}).get("judge") or {}).get("sha256"))
    if note is not None and (judge_id, note) not in UNCALIBRATED_SAID:  # as the CLI says it last
        import warnings

        UNCALIBRATED_SAID.add((judge_id, note))
        warnings.warn(note, UncalibratedJudgeWarning, stacklevel=2)
    return results


class UncalibratedJudgeWarning(UserWarning):
    """`evaluate` on a judge whose τ was not fitted for it (`EvalResults.calibration_note`):
    said once per judge in a process (UNCALIBRATED_SAID), the note on every result."""


UNCALIBRATED_SAID: set[tuple[str, str]] = set()
"""(judge sha256, note) pairs `evaluate` has warned about in this process: a test suite's many
calls (one per case) hear it once per judge."""


@dataclass
class GeneratedSet:
    """What `generate` produced: `rows` (the test set, as `run` reads it), `corpus` (the
    chunks, `{"id", "text", "source", "language", "tokens"}`), `report` (kept and dropped per
    kind and filter, seconds) and `problems` (input files skipped, one line each)."""

    rows: list[dict[str, Any]]
    corpus: list[dict[str, Any]]
    report: dict[str, Any]
    problems: list[str] = field(default_factory=list)


def generate(
    docs: str | Path | Iterable[str | Path],
    out: str | Path | None = None,
    *,
    n: int = 20,
    kinds: Iterable[str] | str | None = None,
    seed: int = 0,
    chunk_tokens: int = 256,
    duplicate_cosine: float = 0.92,
    config: str | Path | None = None,
    judge: Any = None,
    embedder: Any = None,
    progress: bool = False,
    overwrite: bool = False,
    **settings: Any,
) -> GeneratedSet:
    """Generate a test set from documents (files or folders of .txt, .md, .html, .pdf, or a
    JSONL of {"id", "text"} chunks): the same code path as `localeval generate`. `out`: write
    the test set there (JSONL), with the corpus, the dropped candidates and the report beside
    it (an existing test set there is replaced only with `overwrite`). judge / embedder: as
    for `evaluate`. **settings: any Settings field (profile, language, cache, ...)."""
    from localeval.config import load_config
    from localeval.generate import KINDS
    from localeval.generate.pipeline import GenerateOptions
    from localeval.generate.pipeline import generate as run_generate

    overrides = dict(settings)
    if isinstance(judge, str):
        overrides["judge"], judge = judge, None
    if isinstance(embedder, (str, Path)):
        overrides["embedder"], embedder = embedder, None
    resolved = load_config(Path(config) if config is not None else None,
                           {k: v for k, v in overrides.items() if v is not None})
    try:
        options = GenerateOptions(n=n, kinds=KINDS if kinds is None else kinds, seed=seed,
                                  chunk_tokens=chunk_tokens, duplicate_cosine=duplicate_cosine)
    except ValidationError as exc:
        where, msg = first_error(exc)
        raise ConfigError(f"generate {where}: {msg}") from None
    paths = [docs] if isinstance(docs, (str, Path)) else list(docs)
    made = run_generate(paths, Path(out) if out is not None else None, resolved, options,
                        judge=judge, embedder=embedder, progress=progress,
                        overwrite=overwrite)
    return GeneratedSet(rows=[r.model_dump(exclude_none=True) for r in made.rows],
                        corpus=[c.model_dump() for c in made.corpus], report=made.report,
                        problems=made.problems)


def as_rows(data: Any) -> Any:
    """A path or a list of dicts as is; a table (pandas or polars DataFrame, Hugging Face or
    pyarrow dataset: duck-typed) as a list of dicts of plain Python values."""
    if isinstance(data, (str, Path, bytes, Mapping)):
        return data
    names = getattr(data, "column_names", None) or getattr(data, "columns", None)
    if names is not None and not isinstance(names, (str, bytes)):
        from localeval.data.readers import refuse_duplicate_columns

        refuse_duplicate_columns(list(names), "the table")
    for method in ("to_list", "to_pylist", "to_dicts"):  # datasets / pyarrow / polars
        if callable(getattr(data, method, None)):
            return [_plain_row(r) for r in getattr(data, method)()]
    if hasattr(data, "columns") and callable(getattr(data, "to_dict", None)):  # pandas
        return [_plain_row(r) for r in data.to_dict(orient="records")]
    if callable(getattr(data, "to_pandas", None)):
        return as_rows(data.to_pandas())
    return data


def _plain_row(row: Any) -> Any:
    if not isinstance(row, Mapping):
        return row  # the loader reports it, naming its row
    return {k: _plain(v) for k, v in row.items()}


def _plain(v: Any) -> Any:
    """numpy arrays and scalars → Python; NaN / NA (a missing cell) → None."""
    if hasattr(v, "tolist"):
        v = v.tolist()
    if isinstance(v, float) and v != v:
        return None
    if type(v).__name__ in ("NAType", "NaTType"):
        return None
    if isinstance(v, list):
        return [_plain(x) for x in v]
    if isinstance(v, dict):  # a struct column holds every row's keys; absent ones are None
        return {k: _plain(x) for k, x in v.items() if x is not None}
    return v
