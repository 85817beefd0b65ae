"""The run: one `localeval run` (or `evaluate()`) from its rows to its reports. Load the rows,
open the run folder, hand the samples to an executor (executor.py: in this process, or the Ray
plug-in's on Ray workers), append each record as it comes, then write the summary and reports.
One name each: the *run* is this module's; the *executor* evaluates a run's samples; a Ray
*worker* is one actor of the Ray executor (distributed/worker.py).

Ctrl-C, SIGTERM and SIGHUP stop a run alike: the event loop's main task is cancelled (at an
await, never in the middle of writing a record), what is done is saved, the summary and report
are written, and the command says how to resume. A signal set to be ignored (nohup) stays
ignored."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
import time
from collections.abc import Callable, Coroutine, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval import prompts
from localeval.config import Settings
from localeval.data import dataset
from localeval.data.dataset import Dataset, PickledList, Sample
from localeval.errors import OutputError, RunInterrupted
from localeval.executor import Executor, LocalExecutor, Work
from localeval.metrics import Metric, resolve
from localeval.metrics.claims.verdicts import step_thresholds
from localeval.models.preflight import check_before_loading
from localeval.results.folder import OrderedResults, OutputFolder, previous_models
from localeval.results.records import SampleRecord
from localeval.results.runfiles import SUMMARY_FILE, fingerprint_inputs, write_json
from localeval.results.summary import build_summary
from localeval.results.tally import ScoreTally
from localeval.version import __version__


@dataclass
class RunOutcome:
    """A run's summary, its dataset's source and problems (after a run into a folder, no
    samples: freed), and its records: `records` holds them all in memory; `iter_records` reads
    a folder's results.jsonl one record at a time."""

    _records: list[SampleRecord] | OrderedResults
    summary: dict[str, Any]
    dataset: Dataset

    @property
    def records(self) -> list[SampleRecord]:
        """Every record, in input order (read from results.jsonl at the first use)."""
        if not isinstance(self._records, list):
            stored, self._records = self._records, list(self._records)
            stored.close()
        return self._records

    def iter_records(self) -> Iterator[SampleRecord]:
        return iter(self._records)

    @property
    def n_records(self) -> int:
        return len(self._records)


def run(
    source: str | Path | Iterable[Mapping[str, Any]],
    out_dir: Path | None,
    settings: Settings,
    *,
    judge: Any = None,
    embedder: Any = None,
    progress: bool = False,
    log: Callable[[str], None] | None = None,
    resume: bool = False,
    overwrite: bool = False,
    executor: Executor | None = None,
    calibration: Mapping[str, Any] | None = None,
) -> RunOutcome:
    """Evaluate a dataset; write results.jsonl, summary.json and the reports into out_dir (when
    given). Each finished sample is appended to results.jsonl at once. `resume` skips the samples
    out_dir already holds (same settings only); Ctrl-C saves what is done and raises
    RunInterrupted. `executor` evaluates the samples (default: this process,
    executor.LocalExecutor(judge, embedder); the Ray plug-in's distributed.executor.RayExecutor
    on Ray workers, which the CLI and the Python API make for `--ray`). `calibration`: the
    record of the calibration file that set τ (`run --calibration`), kept in summary.json."""
    started = time.perf_counter()
    if executor is None:
        executor = LocalExecutor(judge, embedder)
    judge, embedder = executor.judge, executor.embedder
    data = dataset.load(source, compact=out_dir is not None)  # a file's rows as pickles
    dataset.require_samples(data, source)
    metrics = resolve(settings.metrics, settings.rubrics)
    for problem in data.problems:
        if log:
            log(f"skipped input {problem}")
    applicable = [m for m in metrics if any(not s.missing(m.requires) for s in data.samples)]
    if log and settings.rubrics:
        from localeval.metrics.rubric import said_once

        for line in said_once(settings.rubrics, metrics, data.samples):
            log(line)
    check_before_loading(settings, applicable, judge=judge, embedder=embedder)
    folder: OutputFolder | None = None
    if out_dir is not None:
        hashes = prompts.metric_prompt_hashes(metrics, conversations=bool(data.conversations))
        inputs = fingerprint_inputs(settings, [m.name for m in metrics], hashes, __version__,
                                    step_thresholds(settings, metrics))
        source_path = Path(source) if isinstance(source, str | Path) else None
        folder = OutputFolder.open(
            out_dir, inputs, data.hashes, resume=resume, overwrite=overwrite, log=log,
            dataset=source_path,
        )
    try:
        with on_stop_signals(raise_stopped):
            return _run_open(
                _Run(data, metrics, settings, folder, log, started, calibration), executor,
                progress=progress,
            )
    finally:
        if folder is not None:
            folder.close()


@dataclass
class _Run:
    """A run once its --out folder (if any) is open and locked: the rows (with each one's
    input hash and line), the metrics, the folder, the log and when the run started."""

    data: Dataset
    metrics: list[Metric]
    settings: Settings
    folder: OutputFolder | None
    log: Callable[[str], None] | None
    started: float
    calibration: Mapping[str, Any] | None = None


def _run_open(run: _Run, executor: Executor, *, progress: bool) -> RunOutcome:
    """Evaluate the unfinished rows with the executor, then write the summary and reports."""
    data, folder, hashes = run.data, run.folder, run.data.hashes
    previous = folder.previous if folder is not None else set()
    todo: list[Sample] | PickledList[Sample]
    if isinstance(data.samples, PickledList):  # hashes holds the samples' ids, in their order
        todo = data.samples.select(i not in previous for i in hashes)
    else:
        todo = [s for s in data.samples if s.id not in previous]
    needed = [m for m in run.metrics if any(not s.missing(m.requires) for s in todo)]
    work = Work(run.settings, run.metrics, needed, todo, run.log)
    executor.start(work)  # a Ray executor: the workers load the models; this process none
    from localeval.progress import Progress

    bar = Progress(len(data.samples), done=len(previous), enabled=progress,
                   stats=executor.judge_stats)
    new: list[SampleRecord] = []

    def on_record(sample: Sample, record: SampleRecord) -> None:
        record.input_hash = hashes[record.id]
        record.question, record.answer = sample.question, sample.answer
        if sample.conversation:  # the report shows its last exchange
            turns = sample.value("turns")
            record.question = next((t["content"] for t in reversed(turns)
                                    if t["role"] == "user"), None)
            record.answer = next((t["content"] for t in reversed(turns)
                                  if t["role"] == "assistant"), None)
        if folder is not None:
            folder.write(record)  # results.jsonl holds it; read back once at the end
        else:
            new.append(record)
        bar.advance()

    interrupted: KeyboardInterrupt | None = None
    try:
        run_loop(executor.evaluate(work, on_record))
    except KeyboardInterrupt as exc:  # Ctrl-C, SIGTERM, SIGHUP: keep what is done, write the
        interrupted = exc  # summary, say how to resume
    finally:
        bar.close()
        executor.close()
    n_samples = len(data.samples)
    if folder is not None:  # the rows are done with: free them before the results are read back
        todo.clear()
        data.samples.clear()
    # a SIGTERM/SIGHUP now waits until the summary and the report are written
    with on_stop_signals(lambda signum, frame: None):
        outcome = _finish(run, n_samples, previous, new, executor,
                          interrupted=interrupted is not None)
    if interrupted is not None:
        where = folder.path if folder is not None else None
        args = (outcome.n_records, n_samples, where, outcome.summary)
        signum = getattr(interrupted, "signum", None)
        raise RunStopped(signum, *args) if signum else RunInterrupted(*args)
    return outcome


def _finish(
    run: _Run,
    n_samples: int,
    previous: set[str],
    new: list[SampleRecord],
    executor: Executor,
    *,
    interrupted: bool,
) -> RunOutcome:
    """Order results.jsonl (where there is room), then write summary.json and the reports:
    results.jsonl is read back one record at a time (once for the summary, once for the
    reports), never all at once."""
    folder, metrics = run.folder, run.metrics
    n_previous = len(previous)
    records: list[SampleRecord] | OrderedResults
    if folder is not None:
        previous.clear()
        records = folder.finish(run.data.lines, run.log)
    else:
        records = sorted(new, key=lambda r: r.line)
    tally = ScoreTally({m.name: m.name for m in metrics}, discover=True)
    redone = 0  # records of the dataset's rows as they are now
    for r in records:
        tally.add(r)
        redone += r.input_hash == run.data.hashes.get(r.id)
    summary = build_summary(
        run.data, n_samples, tally, metrics, run.settings, executor.judge_stats(),
        executor.usage(), time.perf_counter() - run.started,
    )
    if run.calibration is not None:  # the file τ came from, beside whether it fits the judge
        summary["calibration"] = {**(summary.get("calibration") or {"calibrated": True}),
                                  "how": "τ from a calibration file (--calibration)",
                                  "tau": run.calibration.get("tau"), "file": dict(run.calibration)}
    summary.update(executor.summary())
    summary["complete"] = not interrupted and redone >= len(run.data.hashes)
    summary["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if n_previous and folder is not None:  # keep what the earlier sessions loaded
        summary["resumed"] = {"samples_from_earlier_sessions": n_previous}
        summary["models"] = {**previous_models(folder.path), **summary["models"]}
    if folder is not None:
        summary["run_fingerprint"] = folder.fingerprint
        try:
            write_json(folder.path / SUMMARY_FILE, summary)
            from localeval.report import write_report

            write_report(folder.path, records, summary)
        except OutputError as exc:
            raise OutputError(
                f"{exc}; all {len(records)} finished samples are saved in {folder.path} — free "
                "some space, then run again with --resume to write the summary and the report "
                "(finished samples are not judged again)"
            ) from None
    return RunOutcome(records, summary=summary, dataset=run.data)


# ---- how a run stops: SIGTERM and SIGHUP as Ctrl-C ------------------------------------------

STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP: a run stops as on Ctrl-C (what is done is saved, with the summary)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


class RunStopped(RunInterrupted):
    """RunInterrupted by SIGTERM or SIGHUP; exits 128 + the signal's number."""

    def __init__(self, signum: int, *args: Any) -> None:
        super().__init__(*args)
        self.signum, self.exit_code = signum, 128 + signum
        self.args = (str(self).replace("interrupted", f"stopped by {signal.Signals(signum).name}",
                                       1),)


@contextlib.contextmanager
def on_stop_signals(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """Handle SIGTERM and SIGHUP with `handler` inside the block (main thread only; a signal
    set to be ignored, as nohup does, stays ignored); the previous handlers after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {}
    for sig in STOP_SIGNALS:
        current = signal.getsignal(sig)
        if current is not signal.SIG_IGN and current is not None:
            before[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in before.items():
            signal.signal(sig, old)


def raise_stopped(signum: int, frame: Any) -> None:
    raise Stopped(signum)


def run_loop(coro: Coroutine[Any, Any, Any]) -> None:
    """asyncio.run(coro), where SIGTERM and SIGHUP cancel the run as Ctrl-C does (at an await,
    never in the middle of writing a record) and then raise Stopped; a second one raises at
    once."""
    got: list[int] = []

    async def main() -> None:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()

        def stop(signum: int, frame: Any) -> None:
            if got:
                raise Stopped(signum)
            got.append(signum)
            loop.call_soon_threadsafe(task.cancel)  # type: ignore[union-attr]

        with on_stop_signals(stop):
            try:
                await coro
            except asyncio.CancelledError:
                if not got:
                    raise

    asyncio.run(main())
    if got:
        raise Stopped(got[0])
