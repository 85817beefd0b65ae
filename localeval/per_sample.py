"""The per-sample step: one sample through every metric that applies to it, concurrently, into
one SampleRecord (scores, details, errors, skips); and many samples with bounded concurrency.
Used by the local runner (runner.py) and by each Ray worker (distributed/worker.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Collection

from localeval.backends import Backends
from localeval.config import Settings
from localeval.dataset import Sample
from localeval.errors import LocalevalError
from localeval.metrics import Metric, MetricContext
from localeval.records import SampleRecord
from localeval.text import detect_language


def sample_language(sample: Sample, settings: Settings) -> str:
    if settings.language != "auto":
        return settings.language
    first_context = sample.contexts[0][:500] if sample.contexts else None
    return detect_language(sample.question, sample.answer, sample.ground_truth, first_context)


async def evaluate_sample(
    sample: Sample, metrics: list[Metric], settings: Settings, backends: Backends
) -> SampleRecord:
    """Run every metric of one sample concurrently; failures become that metric's error."""
    record = SampleRecord(
        id=sample.id, line=sample.line, language=sample_language(sample, settings)
    )
    ctx = MetricContext(
        sample=sample,
        language=record.language,
        settings=settings,
        judge=backends.judge,
        embeddings=backends.embeddings,
    )
    runnable = []
    for m in metrics:
        missing = m.missing(sample)
        if missing:
            needs = ", ".join(" or ".join(f"'{alt}'" for alt in f.split("|")) for f in missing)
            record.skipped[m.name] = f"needs {needs} (missing or empty in this row)"
        else:
            runnable.append(m)
    outcomes = await asyncio.gather(*(m.fn(sample, ctx) for m in runnable), return_exceptions=True)
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
        backends.judge.count_floor(
            [*(sample.contexts or ()), sample.question, sample.answer, sample.ground_truth],
            sample.id)
    return record


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
    on_record: Callable[[Sample, SampleRecord], None],
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
