"""Drive a run: load rows, build the backends the chosen metrics need, evaluate every sample's
metrics concurrently (their judge requests meet in the judge), write results and the summary."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval import __version__, dataset, prompts
from localeval.config import Settings
from localeval.dataset import Dataset, Sample
from localeval.embed import EmbeddingStore
from localeval.errors import ConfigError, LocalevalError, ModelError
from localeval.judge.client import JudgeClient
from localeval.metrics import Metric, MetricContext, resolve
from localeval.results import (
    RESULTS_FILE,
    SUMMARY_FILE,
    ResultsWriter,
    RunInterrupted,
    SampleRecord,
    fingerprint_inputs,
    input_hash,
    metric_summary,
    open_run_folder,
    previous_models,
    rewrite_in_order,
    write_json,
)
from localeval.text import detect_language


@dataclass
class Backends:
    judge: JudgeClient | None = None
    embeddings: EmbeddingStore | None = None
    info: dict[str, Any] = field(default_factory=dict)

    def close(self) -> None:
        if self.judge is not None:
            self.judge.close()


@dataclass
class RunOutcome:
    records: list[SampleRecord]
    summary: dict[str, Any]
    dataset: Dataset


def build_backends(
    settings: Settings, metrics: list[Metric], judge: Any = None, embedder: Any = None
) -> Backends:
    """Load only what the metrics need. `judge`/`embedder` objects override the settings."""
    from localeval import models
    from localeval.judge.cache import AnswerCache

    backends = Backends()
    manifest = models.load_manifest()
    profile = manifest.profile(settings.profile)
    if any(m.uses_judge for m in metrics):
        if judge is None:
            judge, backends.info["judge"] = _make_judge(settings, manifest, profile)
        else:
            backends.info["judge"] = {
                "name": judge.name,
                "sha256": judge.fingerprint,
                "parallel": getattr(judge, "parallel", 1),
            }
        cache_path = settings.cache_path()
        cache = AnswerCache(cache_path) if cache_path is not None else None
        backends.info["cache"] = str(cache_path) if cache_path else None
        backends.judge = JudgeClient(judge, cache)
    if any(m.uses_embedder for m in metrics):
        if embedder is None:
            embedder, backends.info["embedder"] = _make_embedder(settings, manifest, profile)
        else:
            backends.info["embedder"] = {"name": embedder.name, "sha256": embedder.fingerprint}
        backends.embeddings = EmbeddingStore(embedder)
    return backends


def _make_judge(settings: Settings, manifest: Any, profile: dict[str, str]) -> tuple[Any, dict]:
    from localeval import models

    if settings.judge == "fake":
        from localeval.judge.fake import FakeJudge

        if settings.fake_answers is None:
            raise ConfigError("--judge fake needs --fake-answers FILE (a JSON list of raw answers)")
        return FakeJudge.from_file(settings.fake_answers), {"name": "fake", "sha256": "fake"}
    if settings.judge_model is not None:
        path = Path(settings.judge_model)
        sha, name = models.sha256_of_user_path(path), path.name
    else:
        spec = manifest.get(profile["judge"])
        path, sha, name = models.require(spec), models.expected_sha256(spec), spec.name
    from localeval.judge.batched import BatchedLlamaJudge, resolve_parallel
    from localeval.judge.llama import LlamaJudge

    parallel = resolve_parallel(settings.parallel, settings.n_gpu_layers)
    common = dict(
        n_ctx=settings.n_ctx,
        n_threads=settings.n_threads,
        n_gpu_layers=settings.n_gpu_layers,
        n_batch=settings.n_batch,
        seed=settings.seed,
        temperature=settings.temperature,
    )
    judge = (
        BatchedLlamaJudge(path, sha, parallel=parallel, **common)
        if parallel > 1
        else LlamaJudge(path, sha, **common)
    )  # type: ignore[arg-type]
    return judge, {
        "name": name,
        "path": str(path),
        "sha256": sha,
        "n_ctx": judge.n_ctx,
        "gpu_offload": judge.gpu_offload,
        "parallel": parallel,
    }


def _make_embedder(settings: Settings, manifest: Any, profile: dict[str, str]) -> tuple[Any, dict]:
    from localeval import models
    from localeval.embed import HashEmbedder, SentenceTransformerEmbedder

    if settings.embedder is not None:
        path = Path(settings.embedder)
        sha = models.sha256_of_user_path(path)
        return (
            SentenceTransformerEmbedder(path, sha, batch_size=settings.embed_batch_size),
            {"name": path.name, "path": str(path), "sha256": sha},
        )
    if settings.judge == "fake":
        e = HashEmbedder()
        return e, {"name": e.name, "sha256": e.fingerprint}
    wanted = profile["embedder"]
    candidates = [wanted] + [
        n for n, s in manifest.models.items() if s.role == "embedder" and n != wanted
    ]
    problems = []
    for name in candidates:  # the profile's embedder, else the best one present
        spec = manifest.get(name)
        state = models.check(spec, full=False)
        if not state.ok:
            problems.append(f"{name}: {state.detail}")
            continue
        info = {"name": name, "path": str(state.path), "sha256": models.expected_sha256(spec)}
        if name != wanted:
            info["fallback"] = f"profile embedder {wanted} unavailable ({problems[0]}); used {name}"
        return SentenceTransformerEmbedder(
            state.path, info["sha256"], batch_size=settings.embed_batch_size
        ), info
    raise ModelError("no embedder available: " + "; ".join(problems))


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
    return record


def sample_concurrency(settings: Settings, backends: Backends) -> int:
    """How many samples to evaluate at once: a batched judge gets twice its slots in samples, so
    a freed slot finds a request queued."""
    slots = (backends.info.get("judge") or {}).get("parallel", 0)
    return 2 * slots if slots > 1 else max(1, settings.parallel or 1)


async def evaluate_all(
    samples: list[Sample],
    metrics: list[Metric],
    settings: Settings,
    backends: Backends,
    on_record: Callable[[SampleRecord], None],
) -> list[SampleRecord]:
    """Evaluate samples with bounded concurrency so that several samples' requests overlap."""
    limit = asyncio.Semaphore(sample_concurrency(settings, backends))
    records: list[SampleRecord] = []

    async def one(sample: Sample) -> None:
        async with limit:
            record = await evaluate_sample(sample, metrics, settings, backends)
        records.append(record)
        on_record(record)

    await asyncio.gather(*(one(s) for s in samples))
    return records


def owner_of(key: str) -> str:
    """The metric that produced a score key: `metric`, `metric.sub` or `metric@k`."""
    return key.split(".", 1)[0].split("@", 1)[0]


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
    ray: Any = None,
) -> RunOutcome:
    """Evaluate a dataset; write results.jsonl, summary.json and the reports into out_dir (when
    given). Each finished sample is appended to results.jsonl at once. `resume` skips the samples
    out_dir already holds (same settings only); Ctrl-C saves what is done and raises
    RunInterrupted. `ray` (True, an address or RayOptions) evaluates the samples on Ray workers
    (localeval/distributed) instead of in this process."""
    started = time.perf_counter()
    data = dataset.load(source)
    metrics = resolve(settings.metrics)
    for problem in data.problems:
        if log:
            log(f"skipped input {problem}")
    hashes = {s.id: input_hash(s) for s in data.samples}
    previous: list[SampleRecord] = []
    if out_dir is not None:
        steps = {s for m in metrics for s in m.steps}
        inputs = fingerprint_inputs(
            settings,
            [m.name for m in metrics],
            prompts.prompt_hashes(steps) if steps else {},
            __version__,
        )
        previous = open_run_folder(
            out_dir, inputs, hashes, resume=resume, overwrite=overwrite, log=log
        )
    by_id = {s.id: s for s in data.samples}
    for r in previous:
        r.line = by_id[r.id].line
    done_ids = {r.id for r in previous}
    todo = [s for s in data.samples if s.id not in done_ids]
    needed = [m for m in metrics if any(not m.missing(s) for s in todo)]
    evaluate = evaluate_all
    if ray is None or ray is False:
        backends = build_backends(settings, needed, judge=judge, embedder=embedder)
        if backends.embeddings is not None:  # one batched pass over the texts known up front
            texts = (t for s in todo for t in (s.answer, s.ground_truth, s.question))
            backends.embeddings.prefetch(texts, background=(os.cpu_count() or 1) > 2)
    else:  # Ray workers load the models and evaluate; this process loads none
        from localeval.distributed.driver import start_workers

        backends = start_workers(ray, settings, metrics, needed, judge, embedder, log, len(todo))
        evaluate = backends.evaluate_all
    writer = ResultsWriter(out_dir / RESULTS_FILE) if out_dir is not None else None
    from localeval.progress import Progress

    bar = Progress(
        len(data.samples),
        done=len(previous),
        enabled=progress,
        stats=lambda: backends.judge.stats if backends.judge else None,
    )
    new: list[SampleRecord] = []

    def on_record(record: SampleRecord) -> None:
        sample = by_id.get(record.id)
        if sample is not None:
            record.input_hash = hashes[record.id]
            record.question, record.answer = sample.question, sample.answer
        new.append(record)
        if writer:
            writer.write(record)
        bar.advance()

    interrupted = False
    try:
        asyncio.run(evaluate(todo, metrics, settings, backends, on_record))
    except KeyboardInterrupt:  # Ctrl-C: keep what is done, write the summary, say how to resume
        interrupted = True
    finally:
        bar.close()
        if writer:
            writer.close()
        backends.close()
    records = sorted(previous + new, key=lambda r: r.line)
    summary = build_summary(
        data, records, metrics, settings, backends, time.perf_counter() - started
    )
    if hasattr(backends, "ray_summary"):
        summary["ray"] = backends.ray_summary()
    summary["complete"] = not interrupted and len(records) == len(data.samples)
    summary["finished_at"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    if previous and out_dir is not None:  # keep what the earlier sessions loaded
        summary["resumed"] = {"samples_from_earlier_sessions": len(previous)}
        summary["models"] = {**previous_models(out_dir), **summary["models"]}
    if out_dir is not None:
        rewrite_in_order(out_dir / RESULTS_FILE, records)
        write_json(out_dir / SUMMARY_FILE, summary)
        from localeval.report import write_report

        write_report(out_dir, records, summary)
    if interrupted:
        raise RunInterrupted(len(records), len(data.samples), out_dir, summary)
    return RunOutcome(records=records, summary=summary, dataset=data)


def build_summary(
    data: Dataset,
    records: list[SampleRecord],
    metrics: list[Metric],
    settings: Settings,
    backends: Backends,
    elapsed: float,
) -> dict[str, Any]:
    keys: dict[str, str] = {}
    for m in metrics:  # a metric with no score anywhere still gets a line (all errors/skips)
        keys.setdefault(m.name, m.name)
    for r in sorted(records, key=lambda r: r.line):
        for key in r.scores:
            keys.setdefault(key, owner_of(key))
    stats = backends.judge.stats if backends.judge else None
    steps = {s for m in metrics for s in m.steps}
    return {
        "localeval_version": __version__,
        "dataset": {
            "source": data.source,
            "samples": len(data.samples),
            "input_errors": [p.model_dump() for p in data.problems],
        },
        "metrics": metric_summary(records, keys),
        "models": backends.info,
        "prompts": prompts.prompt_hashes(steps) if steps else {},
        "settings": settings.model_dump(mode="json"),
        "elapsed_s": round(elapsed, 3),
        "judge": None
        if stats is None
        else {
            "calls": stats.calls,
            "cached": stats.cached,
            "failures": stats.failures,
            "prompt_tokens": stats.prompt_tokens,
            "prompt_tokens_processed": stats.prompt_tokens_processed,
            "completion_tokens": stats.completion_tokens,
            "calls_by_step": stats.by_step,
        },
        "embedder": None
        if backends.embeddings is None
        else {"texts_encoded": backends.embeddings.encoded},
    }
