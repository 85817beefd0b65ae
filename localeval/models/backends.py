"""The backends a run needs, built from the settings: the judge (the llama.cpp engine, loaded
lazily, or the fake judge) behind its answer cache, and the embedder."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.config import Settings
from localeval.errors import ConfigError, ModelError
from localeval.judge.client import JudgeClient
from localeval.judge.interface import VerdictScorer
from localeval.metrics import Metric

if TYPE_CHECKING:
    from localeval.models.embed import EmbeddingStore

HeadLoader = Callable[[Settings, str], tuple[VerdictScorer, dict[str, Any]]]
"""(settings, the judge's sha256) → the scorer of the head file `settings.verifier` names, and
what summary.json says of it."""
_head_loader: list[HeadLoader] = []


def plug_head(loader: HeadLoader) -> None:
    """Where the verifier plug-in attaches (localeval/verifier/__init__.py, on import): the core
    never imports it."""
    _head_loader[:] = [loader]


@dataclass
class Backends:
    judge: JudgeClient | None = None
    embeddings: EmbeddingStore | None = None
    info: dict[str, Any] = field(default_factory=dict)
    every_request: bool = False
    """A dry run (`run --estimate`): a request a run makes only on some of the judge's answers
    is asked whatever they are (a conversation turn's user pass), so its count is an upper
    bound."""

    def describe(self) -> dict[str, Any]:
        """`info`, plus how long the judge model took to load (null: never loaded, because
        every answer came from the cache)."""
        info = dict(self.info)
        inner = getattr(self.judge, "judge", None)
        if "judge" in info and hasattr(inner, "load_seconds"):
            info["judge"] = {**info["judge"], "load_seconds": inner.load_seconds}  # type: ignore[union-attr]
        return info

    def close(self) -> None:
        if self.judge is not None:
            self.judge.close()


def build_backends(
    settings: Settings, metrics: list[Metric], judge: Any = None, embedder: Any = None,
    tap: list[int] | None = None, preload: bool = False,
) -> Backends:
    """Load only what the metrics need. `judge`/`embedder` objects override the settings;
    `tap`: layers the judge reads at each verdict with no head to score them (verifier fit);
    `preload`: samples are waiting, so a judge no answer can come from the cache for (the cache
    is off or empty) and the embedder start loading in threads; the caller waits for the
    embedder's load (its `load`) before it keeps a record (executor.kept_once_loaded)."""
    from localeval.judge.cache import AnswerCache

    backends = Backends()
    if any(m.uses_judge for m in metrics):
        if judge is None:
            judge, backends.info["judge"] = make_judge(settings, tap)
        else:
            backends.info["judge"] = {
                "name": judge.name,
                "sha256": judge.fingerprint,
                "parallel": getattr(judge, "parallel", 1),
            }
        verifier, backends.info["verifier"] = _verifier(settings, judge.fingerprint)
        cache_path = settings.cache_path()
        cache, unusable = None, None
        if cache_path is not None:
            try:
                cache = AnswerCache(cache_path)
            except ConfigError as exc:  # the cache only makes a run cheaper: go on without it
                unusable = f"{exc}; this run goes on without it"
        backends.info["cache"] = str(cache_path) if cache is not None else None
        backends.judge = JudgeClient(judge, cache, verifier)
        backends.judge.cache_error = unusable
        if preload and hasattr(judge, "start_loading") and (
                cache is None or not cache.holds_answers()):
            judge.start_loading()
    if any(m.needs_embedder(settings) for m in metrics):
        if embedder is None:
            embedder, backends.info["embedder"] = make_embedder(settings, in_thread=preload)
        else:
            backends.info["embedder"] = {"name": embedder.name, "sha256": embedder.fingerprint}
        from localeval.models.embed import EmbeddingStore

        backends.embeddings = EmbeddingStore(embedder)
    return backends


def _verifier(settings: Settings, judge_sha256: str
              ) -> tuple[VerdictScorer | None, dict[str, Any]]:
    """The scorer of the head file `--verifier` names (the verifier plug-in); with `auto` or
    `none` no head: the judge's own P(supported)."""
    if not settings.names_head():
        reason = ("--verifier none" if settings.verifier == "none"
                  else "--verifier auto: no head is packaged")
        return None, {"head": "none: raw P(supported)", "reason": reason}
    if not _head_loader:
        raise ConfigError(f"--verifier {settings.verifier}: a head file needs the verifier "
                          "plug-in; import localeval.verifier before the run")
    return _head_loader[0](settings, judge_sha256)


def make_judge(settings: Settings, tap: list[int] | None = None) -> tuple[Any, dict]:
    """The run's judge, not yet loaded (judge/llamacpp/__init__.py; the fake judge with `--judge fake`), and
    what summary.json → models.judge says of it. The manifest is read only for the profile's
    judge."""
    from localeval import models

    if settings.judge == "fake":
        from localeval.judge.fake import FakeJudge
        from localeval.models.preflight import check_fake_judge

        check_fake_judge(settings)
        return FakeJudge.from_file(settings.fake_answers), {"name": "fake", "sha256": "fake"}
    if settings.judge_model is not None:
        path = Path(settings.judge_model)
        sha, name = models.sha256_of_user_path(path), path.name
    else:
        manifest = models.load_manifest()
        spec = manifest.get(manifest.profile(settings.profile)["judge"])
        path, sha, name = models.require(spec), models.expected_sha256(spec), spec.name
    from localeval.judge.llamacpp import LazyJudge, gpu_offload, resolve_parallel

    parallel = resolve_parallel(settings.parallel, settings.n_gpu_layers)
    verifier, _ = _verifier(settings, sha)
    judge = LazyJudge(path, sha, parallel=parallel, n_ctx=settings.n_ctx,
                      n_threads=settings.n_threads, n_gpu_layers=settings.n_gpu_layers,
                      max_chunk=settings.n_batch, seed=settings.seed,
                      temperature=settings.temperature,
                      hidden_layers=tap or (verifier.layers if verifier is not None else ()))
    return judge, {
        "name": name,
        "path": str(path),
        "sha256": sha,
        "n_ctx": settings.n_ctx,
        "gpu_offload": gpu_offload(settings.n_gpu_layers),
        "parallel": parallel,
        "prompt_chunk": settings.n_batch,
    }


def make_embedder(settings: Settings, *, in_thread: bool = False) -> tuple[Any, dict]:
    """The run's embedder (the hash embedder with the fake judge) and what summary.json says of
    it; the manifest is read only for the profile's embedder. `in_thread`: a sentence-transformers
    model loads in a thread (SentenceTransformerEmbedder)."""
    from localeval import models
    from localeval.models.embed import HashEmbedder, SentenceTransformerEmbedder

    if settings.embedder is not None:
        path = Path(settings.embedder)
        sha = models.sha256_of_user_path(path)
        return (
            SentenceTransformerEmbedder(path, sha, batch_size=settings.embed_batch_size,
                                        in_thread=in_thread),
            {"name": path.name, "path": str(path), "sha256": sha},
        )
    if settings.judge == "fake":
        e = HashEmbedder()
        return e, {"name": e.name, "sha256": e.fingerprint}
    manifest = models.load_manifest()
    wanted = manifest.profile(settings.profile)["embedder"]
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
            state.path, info["sha256"], batch_size=settings.embed_batch_size, in_thread=in_thread
        ), info
    raise ModelError("no embedder available: " + "; ".join(problems))
