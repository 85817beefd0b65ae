"""The executor: what evaluates a run's samples, and the per-sample step every executor runs.

`evaluate_sample`: one sample through every metric that applies to it, concurrently, into one
SampleRecord (scores, details, errors, skips). An `Executor` evaluates a run's samples and
reports its part of the summary: `LocalExecutor` here, in this process, with bounded
concurrency; `distributed.executor.RayExecutor` on Ray workers, each of which runs
`evaluate_sample` itself. The CLI and the API choose one and hand it to the run (runner.py),
which knows nothing else of where the samples are evaluated."""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import os
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from localeval.config import Settings
from localeval.data.dataset import Sample
from localeval.errors import LocalevalError
from localeval.judge.client import JudgeStats
from localeval.metrics import Metric, MetricContext, shield_meaning
from localeval.metrics.shield import meaning_flags, planted, without
from localeval.models.backends import Backends, build_backends
from localeval.results.records import SampleRecord
from localeval.text import detect_language

if TYPE_CHECKING:
    from localeval.models.embed import EmbeddingStore

OnRecord = Callable[[Sample, SampleRecord], None]
Log = Callable[[str], None]


async def sample_language(sample: Sample, settings: Settings,
                          store: EmbeddingStore | None = None) -> str:
    """The language of the sample's templates: `settings.language`, or the one its material is
    written in, less any note to the evaluator that a form or the meaning head (with the run's
    embeddings `store`: shield.meaning_flags) flags. A Chinese note planted in an English row
    must not switch its templates to Chinese: the shield's copy without the note is judged in
    the same language as the row."""
    if settings.language != "auto":
        return settings.language
    return language_less(sample, frozenset(await meaning_flags(sample, settings, store)))


def language_less(sample: Sample, also: frozenset[str] = frozenset()) -> str:
    """The language the sample's material is written in, less the sentences a form flags and
    those in `also`."""
    if planted(sample, also=also):
        sample = without(sample, also=also)
    first_context = sample.contexts[0][:500] if sample.contexts else None
    return detect_language(sample.question, sample.answer, sample.ground_truth, first_context)


async def evaluate_sample(
    sample: Sample, metrics: list[Metric], settings: Settings, backends: Backends
) -> SampleRecord:
    """Run every metric of one sample concurrently; failures become that metric's error. A
    conversation is scored turn by turn, then as a whole (localeval/conversation.py).

    With `--language auto` the metrics start in the language the forms leave (no embedder
    needed: the judge works while the embedder loads) as the meaning head reads the sample;
    where its flags change the language, that start is set aside and the metrics run again in
    the right one."""
    if sample.conversation:
        from localeval.conversation import evaluate_conversation

        return await evaluate_conversation(sample, metrics, settings, backends,
                                           evaluate_metrics)
    if settings.language != "auto":
        return await evaluate_metrics(sample, metrics, settings, backends, settings.language)
    guess = language_less(sample)
    early = asyncio.ensure_future(evaluate_metrics(sample, metrics, settings, backends, guess))
    try:
        language = await sample_language(sample, settings, backends.embeddings)
    except BaseException:
        early.cancel()
        await asyncio.gather(early, return_exceptions=True)
        raise
    record = await early  # finished even when set aside: a run's requests never depend on timing
    if language == guess:
        return record
    return await evaluate_metrics(sample, metrics, settings, backends, language)


async def evaluate_metrics(sample: Sample, metrics: list[Metric], settings: Settings,
                           backends: Backends, language: str) -> SampleRecord:
    """One (single-turn) sample through the metrics, concurrently, in `language`."""
    record = SampleRecord(id=sample.id, line=sample.line, language=language)
    ctx = MetricContext(
        sample=sample,
        language=record.language,
        settings=settings,
        judge=backends.judge,
        embeddings=backends.embeddings,
    )
    runnable = []
    for m in metrics:
        missing = sample.missing(m.requires)
        if missing:
            needs = ", ".join(" or ".join(f"'{alt}'" for alt in f.split("|")) for f in missing)
            record.skipped[m.name] = f"needs {needs} (missing or empty in this row)"
        else:
            runnable.append(m)
    # each metric gets its own view of the shared context (the same pending requests), which
    # holds it to the steps it declares
    outcomes = await asyncio.gather(
        *(m.fn(sample, dataclasses.replace(ctx, steps=m.steps)) for m in runnable),
        return_exceptions=True)
    for m, outcome in zip(runnable, outcomes, strict=True):
        if isinstance(outcome, LocalevalError):
            record.errors[m.name] = str(outcome)
        elif isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome  # KeyboardInterrupt, CancelledError
            record.errors[m.name] = (
                f"internal error {type(outcome).__name__}: {outcome} (a bug; please report it)"
            )
        else:
            record.scores.update(outcome.scores)
            details = dict(outcome.details)
            if outcome.reason:
                details["unscored_reason"] = outcome.reason
            if details:
                record.details[m.name] = details
    if backends.judge is not None:
        backends.judge.count_floor(sample.own_texts(), sample.id)
    return record


def known_texts(sample: Sample) -> list[str | None]:
    """The texts of a sample known before it is judged, to embed in one batched pass: its
    answer, ground truth and question, or a conversation's messages and ground truths."""
    if sample.conversation:
        return [t.get(k) for t in sample.value("turns") for k in ("content", "ground_truth")]
    return [sample.answer, sample.ground_truth, sample.question]


def sample_concurrency(settings: Settings, backends: Backends) -> int:
    """How many samples to evaluate at once: a batched judge gets twice its slots in samples, so
    a freed slot finds a request queued."""
    slots = (backends.info.get("judge") or {}).get("parallel", 0)
    return 2 * slots if slots > 1 else max(1, settings.parallel or 1)


async def evaluate_all(
    samples: Collection[Sample],
    metrics: list[Metric],
    settings: Settings,
    backends: Backends,
    on_record: OnRecord,
) -> None:
    """Evaluate samples with bounded concurrency so that several samples' requests overlap:
    as many workers as samples may run at once, each taking the next sample in input order (no
    task per sample up front: a query log of 200,000 rows holds a few coroutines, not 200,000).
    Each record goes to on_record with its sample, and is not kept here."""
    queue = iter(samples)

    async def worker() -> None:
        for sample in queue:
            on_record(sample, await evaluate_sample(sample, metrics, settings, backends))

    n = min(len(samples), sample_concurrency(settings, backends))
    await asyncio.gather(*(worker() for _ in range(n)))


async def kept_once_loaded(load: concurrent.futures.Future[Any],
                           evaluate: Callable[[OnRecord], Awaitable[None]],
                           on_record: OnRecord) -> None:
    """Evaluate while a model loads (`load`), each record held until the load has finished. A
    model that fails to load stops the evaluation with its one error, as a load before the run
    would, rather than an error in every metric that met it: a record finished after the
    failure is dropped (its judge answers are in the cache), one finished before it is kept."""
    held: list[tuple[Sample, SampleRecord]] = []

    def release() -> None:
        for sample, record in held:
            on_record(sample, record)
        held.clear()

    def keep(sample: Sample, record: SampleRecord) -> None:
        if not load.done():
            held.append((sample, record))
        elif load.exception() is None:
            release()
            on_record(sample, record)

    task = asyncio.ensure_future(evaluate(keep))
    try:
        await asyncio.wrap_future(load)
    except BaseException:  # the load failed, or the run was stopped: keep what is held
        release()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        raise
    release()
    await task


def embedder_load(backends: Backends) -> concurrent.futures.Future[Any] | None:
    """The embedder's load while it is under way or has failed (None: loaded, or no embedder
    that loads in a thread)."""
    store = backends.embeddings
    load = getattr(store.embedder, "load", None) if store is not None else None
    if load is None or (load.done() and load.exception() is None):
        return None
    return load


@dataclass(frozen=True)
class Work:
    """What the runner hands an executor before the samples: the run's settings and metrics,
    the metrics some unfinished sample can feed (what to load models for), the unfinished
    samples, and where to say what happens."""

    settings: Settings
    metrics: list[Metric]
    needed: list[Metric]
    todo: Collection[Sample]
    log: Log | None = None


@runtime_checkable
class Executor(Protocol):
    """Where a run's samples are evaluated. `judge` / `embedder`: objects the caller gave
    (they override the settings; None: built from the settings)."""

    judge: Any
    embedder: Any

    def start(self, work: Work) -> None:
        """Load the models (or start the workers) that `work.needed` needs."""
        ...

    async def evaluate(self, work: Work, on_record: OnRecord) -> None:
        """Evaluate `work.todo`; pass each record to on_record as soon as it is done."""
        ...

    def judge_stats(self) -> JudgeStats | None:
        """The judge's figures so far (None: no judge): the progress bar and the summary."""
        ...

    def usage(self) -> dict[str, Any]:
        """What summary.json says of the models: "models" (which were loaded), "cache_error",
        "texts_encoded" (None: no embedder)."""
        ...

    def summary(self) -> dict[str, Any]:
        """This executor's own keys of summary.json ({} for a local run; {"ray": ...})."""
        ...

    def close(self) -> None: ...


class LocalExecutor:
    """Evaluate in this process: build the backends, then `evaluate_all`."""

    def __init__(self, judge: Any = None, embedder: Any = None) -> None:
        self.judge, self.embedder = judge, embedder
        self.backends = Backends()

    def start(self, work: Work) -> None:
        backends = build_backends(work.settings, work.needed, judge=self.judge,
                                  embedder=self.embedder, preload=len(work.todo) > 0)
        self.backends = backends
        shield_meaning.note_in(backends, work.settings)
        if backends.judge is not None and work.log is not None:
            backends.judge.warn = work.log
            if backends.judge.cache_error:  # unusable from the start (summary.json says so too)
                work.log(f"warning: {backends.judge.cache_error}")
        if backends.embeddings is not None:  # one batched pass over the texts known up front
            texts = (t for s in work.todo for t in known_texts(s))
            loading = embedder_load(backends) is not None
            backends.embeddings.prefetch(texts, background=loading or (os.cpu_count() or 1) > 2)

    async def evaluate(self, work: Work, on_record: OnRecord) -> None:
        load = embedder_load(self.backends)
        if load is None:
            await evaluate_all(work.todo, work.metrics, work.settings, self.backends, on_record)
            return
        await kept_once_loaded(
            load, lambda keep: evaluate_all(work.todo, work.metrics, work.settings,
                                            self.backends, keep), on_record)

    def judge_stats(self) -> JudgeStats | None:
        return self.backends.judge.stats if self.backends.judge is not None else None

    def usage(self) -> dict[str, Any]:
        b = self.backends
        return {
            "models": b.describe(),
            "cache_error": b.judge.cache_error if b.judge is not None else None,
            "texts_encoded": None if b.embeddings is None else b.embeddings.encoded,
        }

    def summary(self) -> dict[str, Any]:
        return {}

    def close(self) -> None:
        self.backends.close()

