"""Drive a run: load rows, build the backends the chosen metrics need, evaluate every sample's
metrics concurrently (their judge requests meet in the judge), write results and the summary."""

from __future__ import annotations

import asyncio
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
    ResultsWriter,
    SampleRecord,
    metric_summary,
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


def build_backends(settings: Settings, metrics: list[Metric], judge: Any = None,
                   embedder: Any = None) -> Backends:
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
            backends.info["judge"] = {"name": judge.name, "sha256": judge.fingerprint}
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
    from localeval.judge.llama import LlamaJudge

    judge = LlamaJudge(path, sha, n_ctx=settings.n_ctx, n_threads=settings.n_threads,
                       n_gpu_layers=settings.n_gpu_layers, n_batch=settings.n_batch,
                       seed=settings.seed, temperature=settings.temperature)
    return judge, {"name": name, "path": str(path), "sha256": sha, "n_ctx": judge.n_ctx,
                   "gpu_offload": judge.gpu_offload}


def _make_embedder(settings: Settings, manifest: Any, profile: dict[str, str]) -> tuple[Any, dict]:
    from localeval import models
    from localeval.embed import HashEmbedder, SentenceTransformerEmbedder

    if settings.embedder is not None:
        path = Path(settings.embedder)
        sha = models.sha256_of_user_path(path)
        return (SentenceTransformerEmbedder(path, sha, batch_size=settings.embed_batch_size),
                {"name": path.name, "path": str(path), "sha256": sha})
    if settings.judge == "fake":
        e = HashEmbedder()
        return e, {"name": e.name, "sha256": e.fingerprint}
    wanted = profile["embedder"]
    candidates = [wanted] + [n for n, s in manifest.models.items() if s.role == "embedder" and n != wanted]
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
        return SentenceTransformerEmbedder(state.path, info["sha256"],
                                           batch_size=settings.embed_batch_size), info
    raise ModelError("no embedder available: " + "; ".join(problems))


def sample_language(sample: Sample, settings: Settings) -> str:
    if settings.language != "auto":
        return settings.language
    first_context = sample.contexts[0][:500] if sample.contexts else None
    return detect_language(sample.question, sample.answer, sample.ground_truth, first_context)


async def evaluate_sample(sample: Sample, metrics: list[Metric], settings: Settings,
                          backends: Backends) -> SampleRecord:
    """Run every metric of one sample concurrently; failures become that metric's error."""
    record = SampleRecord(id=sample.id, line=sample.line, language=sample_language(sample, settings))
    ctx = MetricContext(sample=sample, language=record.language, settings=settings,
                        judge=backends.judge, embeddings=backends.embeddings)
    runnable = []
    for m in metrics:
        missing = m.missing(sample)
        if missing:
            record.skipped[m.name] = "needs " + ", ".join(f"'{f}'" for f in missing) + \
                " (missing or empty in this row)"
        else:
            runnable.append(m)
    outcomes = await asyncio.gather(*(m.fn(sample, ctx) for m in runnable), return_exceptions=True)
    for m, outcome in zip(runnable, outcomes, strict=True):
        if isinstance(outcome, LocalevalError):
            record.errors[m.name] = str(outcome)
        elif isinstance(outcome, BaseException):
            if not isinstance(outcome, Exception):
                raise outcome  # KeyboardInterrupt, CancelledError
            record.errors[m.name] = f"internal error {type(outcome).__name__}: {outcome} (a bug; please report it)"
        else:
            record.scores.update(outcome.scores)
            details = dict(outcome.details)
            if outcome.reason:
                details["unscored_reason"] = outcome.reason
            if details:
                record.details[m.name] = details
    return record


async def evaluate_all(samples: list[Sample], metrics: list[Metric], settings: Settings,
                       backends: Backends, on_record: Callable[[SampleRecord], None]) -> list[SampleRecord]:
    """Evaluate samples with bounded concurrency so that several samples' requests overlap."""
    limit = asyncio.Semaphore(max(1, settings.parallel or 1))
    records: list[SampleRecord] = []

    async def one(sample: Sample) -> None:
        async with limit:
            record = await evaluate_sample(sample, metrics, settings, backends)
        records.append(record)
        on_record(record)

    await asyncio.gather(*(one(s) for s in samples))
    return records


def owner_of(key: str, metric_names: Iterable[str]) -> str:
    base = key.split(".", 1)[0]
    return base if base in set(metric_names) else "retrieval"


def run(source: str | Path | Iterable[Mapping[str, Any]], out_dir: Path | None, settings: Settings,
        *, judge: Any = None, embedder: Any = None, progress: bool = False,
        log: Callable[[str], None] | None = None) -> RunOutcome:
    """Evaluate a dataset; write results.jsonl and summary.json into out_dir (when given)."""
    started = time.perf_counter()
    data = dataset.load(source)
    metrics = resolve(settings.metrics)
    for problem in data.problems:
        if log:
            log(f"skipped input {problem}")
    backends = build_backends(settings, [m for m in metrics if any(not m.missing(s) for s in data.samples)],
                              judge=judge, embedder=embedder)
    writer = None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / "results.jsonl").unlink(missing_ok=True)
        writer = ResultsWriter(out_dir / "results.jsonl")
    bar = _progress_bar(len(data.samples), progress)

    def on_record(record: SampleRecord) -> None:
        if writer:
            writer.write(record)
        if bar is not None:
            stats = backends.judge.stats if backends.judge else None
            if stats:
                bar.set_postfix(calls=stats.calls, cached=stats.cached, refresh=False)
            bar.update(1)

    try:
        records = asyncio.run(evaluate_all(data.samples, metrics, settings, backends, on_record))
    finally:
        if bar is not None:
            bar.close()
        if writer:
            writer.close()
        backends.close()
    summary = build_summary(data, records, metrics, settings, backends, time.perf_counter() - started)
    if out_dir is not None:
        rewrite_in_order(out_dir / "results.jsonl", records)
        write_json(out_dir / "summary.json", summary)
    return RunOutcome(records=sorted(records, key=lambda r: r.line), summary=summary, dataset=data)


def build_summary(data: Dataset, records: list[SampleRecord], metrics: list[Metric],
                  settings: Settings, backends: Backends, elapsed: float) -> dict[str, Any]:
    names = [m.name for m in metrics]
    keys: dict[str, str] = {}
    for m in metrics:  # a metric with no score anywhere still gets a line (all errors/skips)
        keys.setdefault(m.name, m.name) if m.name != "retrieval" else None
    for r in sorted(records, key=lambda r: r.line):
        for key in r.scores:
            keys.setdefault(key, owner_of(key, names))
    stats = backends.judge.stats if backends.judge else None
    steps = {s for m in metrics for s in m.steps}
    return {
        "localeval_version": __version__,
        "dataset": {"source": data.source, "samples": len(data.samples),
                    "input_errors": [p.model_dump() for p in data.problems]},
        "metrics": metric_summary(records, keys),
        "models": backends.info,
        "prompts": prompts.prompt_hashes(steps) if steps else {},
        "settings": settings.model_dump(mode="json"),
        "elapsed_s": round(elapsed, 3),
        "judge": None if stats is None else {
            "calls": stats.calls, "cached": stats.cached, "failures": stats.failures,
            "prompt_tokens": stats.prompt_tokens, "prompt_tokens_processed": stats.prompt_tokens_processed,
            "completion_tokens": stats.completion_tokens, "calls_by_step": stats.by_step,
        },
        "embedder": None if backends.embeddings is None else {"texts_encoded": backends.embeddings.encoded},
    }


def _progress_bar(total: int, enabled: bool):  # type: ignore[no-untyped-def]
    import sys

    if not enabled or not sys.stderr.isatty():
        return None
    from tqdm import tqdm

    return tqdm(total=total, unit="sample", file=sys.stderr, dynamic_ncols=True)
