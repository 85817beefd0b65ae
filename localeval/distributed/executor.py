"""The Ray executor (`--ray`), run in the process that starts the run (Ray's driver): join or
start Ray, start one worker actor per GPU (or per N CPUs), hand them the unfinished samples and
take the records back as they finish.

Why actors rather than Ray Data: a worker must load a multi-GB judge once and keep it, with its
KV cache and answer cache, for the whole run; its batched engine wants a steady stream of
samples in flight (continuous batching), not fixed batches; and the runner must get each
record the moment it is done, to append it to results.jsonl, so Ctrl-C and --resume behave as
in a local run. A persistent actor per worker, fed by the driver with a bounded number of
samples in flight, gives all of that; a dead actor's unfinished samples are simply handed to
the others.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.config import Settings
from localeval.data.dataset import Sample
from localeval.distributed.options import LOCAL, RayOptions, check_ray_version
from localeval.distributed.worker import (
    STAT_FIELDS,
    EvalWorker,
    ExpectedModel,
    WorkerPlan,
    seal_plan,
)
from localeval.errors import ConfigError, LocalevalError, ModelError
from localeval.executor import OnRecord, Work
from localeval.judge.client import JudgeStats
from localeval.metrics import Metric

Log = Callable[[str], None]


def ray_executor(ray: Any, *, judge: Any = None, embedder: Any = None) -> RayExecutor:
    """The executor of a run on Ray workers: `ray` is True (a Ray instance on this machine), an
    address, a dict or RayOptions (Ray is imported only when it starts)."""
    return RayExecutor(RayOptions.coerce(ray), judge=judge, embedder=embedder)


@dataclass
class RayExecutor:
    """The executor.Executor of `--ray`: the workers hold the models and run
    `executor.evaluate_sample`; this process sums their judge and embedder figures and puts
    "ray" (the workers, the retries) into summary.json."""

    options: RayOptions = field(default_factory=RayOptions)
    judge: Any = None  # a Judge / Embedder object the caller gave: copied to every worker
    embedder: Any = None
    actors: list[Any] = field(default_factory=list)
    workers: list[dict[str, Any]] = field(default_factory=list)
    alive: list[int] = field(default_factory=list)
    retried: int = 0
    sent: int = 0
    address: str | None = None
    log: Log | None = None
    info: dict[str, Any] = field(default_factory=dict)  # the models, as the first worker says
    stats: JudgeStats | None = None  # the judge's figures, summed over the workers
    encoded: int | None = None  # texts the workers' embedders encoded
    _started_ray: bool = False
    _finished: bool = False

    def start(self, work: Work) -> None:
        """Join (or start) Ray and bring up the workers, each with verified, loaded models."""
        self.log = work.log
        if not work.todo:  # a finished run resumed: nothing to hand out
            return
        try:
            import ray
        except ImportError:
            raise ConfigError(
                "--ray needs Ray on this machine and on every node: pip install 'localeval[ray]'"
            ) from None
        try:
            _connect(ray, self.options, self)
            _launch(ray, self, work)
        except BaseException:
            self.close()
            raise

    def judge_stats(self) -> JudgeStats | None:
        return self.stats

    def usage(self) -> dict[str, Any]:
        # each worker has its own cache; its failures show in its log
        return {"models": dict(self.info), "cache_error": None, "texts_encoded": self.encoded}

    async def evaluate(self, work: Work, on_record: OnRecord) -> None:
        """Keep each live worker's capacity of samples in flight; pass each record to
        on_record as it arrives; resend a lost worker's unfinished samples to the others."""
        from ray.exceptions import RayActorError, RayTaskError

        queue = deque(work.todo)
        inflight: dict[asyncio.Future[Any], tuple[int, Sample]] = {}
        finished: asyncio.Queue[asyncio.Future[Any]] = asyncio.Queue()  # O(1) per sample
        load = [0] * len(self.actors)
        while queue or inflight:
            while queue:
                room = [w for w in self.alive if load[w] < self.workers[w]["capacity"]]
                if not room:
                    break
                w = min(room, key=lambda i: load[i] / self.workers[i]["capacity"])
                sample = queue.popleft()
                fut = asyncio.wrap_future(self.actors[w].evaluate.remote(sample).future())
                fut.add_done_callback(finished.put_nowait)
                inflight[fut] = (w, sample)
                load[w] += 1
                self.sent += 1
            if not inflight:
                raise LocalevalError(
                    f"ray: every worker was lost; {len(queue)} sample(s) not evaluated "
                    "(the done ones are saved: rerun with --resume)"
                )
            done = [await finished.get()]
            while not finished.empty():
                done.append(finished.get_nowait())
            for fut in done:
                w, sample = inflight.pop(fut)
                load[w] -= 1
                exc = fut.exception()
                if exc is None:
                    record, delta = fut.result()
                    self._add(delta)
                    self.workers[w]["samples"] += 1
                    on_record(sample, record)
                elif isinstance(exc, RayTaskError):  # evaluate_sample itself failed: a bug
                    raise LocalevalError(
                        f"ray worker on node {self.workers[w]['node']} failed on sample "
                        f"{sample.id}: {str(exc).strip().splitlines()[-1]}"
                    )
                elif isinstance(exc, RayActorError) or _lost(exc):
                    self._lose(w, exc)
                    queue.appendleft(sample)
                    self.retried += 1
                else:
                    raise exc
        self._finished = True

    def _add(self, delta: dict[str, Any]) -> None:
        if self.stats is not None:
            stats = self.stats
            for key in STAT_FIELDS:
                setattr(stats, key, getattr(stats, key) + delta.get(key, 0))
            for step, figures in delta.get("steps", {}).items():
                mine = stats.steps.setdefault(step, dict.fromkeys(figures, 0))
                for k, v in figures.items():
                    mine[k] = mine.get(k, 0) + v
        if self.encoded is not None:
            self.encoded += delta.get("encoded", 0)

    def _lose(self, w: int, exc: BaseException) -> None:
        if w not in self.alive:
            return
        self.alive.remove(w)
        self.workers[w]["lost"] = True
        why = str(exc).strip().splitlines()[0][:160] if str(exc).strip() else type(exc).__name__
        if self.log:
            self.log(
                f"ray: worker {w} on node {self.workers[w]['node']} was lost ({why}); its "
                f"unfinished samples go to the {len(self.alive)} other worker(s)"
            )

    def summary(self) -> dict[str, Any]:
        keep = ("node", "ip", "device", "judge_sha256", "embedder_sha256", "cache", "samples",
                "lost")
        return {"ray": {
            "address": self.address,
            "workers": [{k: w.get(k) for k in keep} for w in self.workers],
            "retried": self.retried,
            "samples_sent": self.sent,
        }}

    def close(self) -> None:
        if not self.actors and not self._started_ray:
            return
        import ray

        if self._finished:  # let the workers close their caches; a killed run just stops them
            with contextlib.suppress(Exception):
                ray.get([self.actors[w].close.remote() for w in self.alive], timeout=30)
        for actor in self.actors:
            with contextlib.suppress(Exception):
                ray.kill(actor)
        self.actors = []
        if self._started_ray:
            ray.shutdown()
            self._started_ray = False


def _lost(exc: BaseException) -> bool:
    """Ray's errors for a dead worker or node (their names move between Ray versions)."""
    names = {c.__name__ for c in type(exc).__mro__}
    return bool(names & {"RayActorError", "ActorDiedError", "ActorUnavailableError",
                         "WorkerCrashedError", "NodeDiedError", "ObjectLostError",
                         "OwnerDiedError", "RaySystemError"})


_INIT: dict[str, Any] = dict(
    include_dashboard=False, log_to_driver=False, logging_level=logging.WARNING
)


def init_local(num_cpus: int) -> None:
    """Start a Ray instance on this machine whose workers import what this process imports,
    from the same folders (this checkout of localeval, the caller's own judge classes)."""
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline tool: no usage reports
    path = [os.getcwd() if p == "" else p for p in sys.path]
    env = {"PYTHONPATH": os.pathsep.join(p for p in path if Path(p).is_dir())}
    ray.init(address="local", num_cpus=num_cpus, runtime_env={"env_vars": env}, **_INIT)


def _connect(ray: Any, options: RayOptions, backends: RayExecutor) -> None:
    check_ray_version(getattr(ray, "__version__", "unknown"))  # before joining anything
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # offline tool: no usage reports
    if ray.is_initialized():  # the caller joined a cluster already (tests, notebooks)
        backends.address = ray.get_runtime_context().gcs_address
        return
    try:
        if options.address == LOCAL:
            cpus = os.cpu_count() or 1
            per = options.cpus_per_worker or min(4, cpus)
            init_local(max(cpus, (options.workers or 1) * per))
        else:
            ray.init(address=options.address, **_INIT)
    except (ConnectionError, RuntimeError, ValueError, TimeoutError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ConfigError(f"ray: cannot join the cluster at {options.address!r}: {first}") from None
    backends._started_ray = True
    backends.address = ray.get_runtime_context().gcs_address


def _launch(ray: Any, backends: RayExecutor, work: Work) -> None:
    from localeval import prompts
    from localeval.version import __version__

    options, settings, metrics, needed = backends.options, work.settings, work.metrics, work.needed
    judge, embedder, n_todo = backends.judge, backends.embedder, len(work.todo)

    resources = ray.cluster_resources()
    total_cpus, total_gpus = int(resources.get("CPU", 0)), int(resources.get("GPU", 0))
    uses_judge = any(m.uses_judge for m in needed)
    gpus = options.gpus
    if gpus is None:
        gpus = total_gpus > 0 and settings.n_gpu_layers != 0 and uses_judge and judge is None
    if gpus:
        n = options.workers or total_gpus
        if n > total_gpus:
            raise ConfigError(f"ray: {n} GPU worker(s) need {n} GPUs; the cluster has {total_gpus}")
        per_worker: dict[str, Any] = {"num_gpus": 1, "num_cpus": options.cpus_per_worker or 1}
        cpus = options.cpus_per_worker
    else:
        cpus = options.cpus_per_worker or max(1, min(4, total_cpus))
        n = options.workers or max(1, total_cpus // cpus)
        if n * cpus > total_cpus:
            raise ConfigError(
                f"ray: {n} worker(s) of {cpus} CPUs need {n * cpus} CPUs; the cluster has "
                f"{total_cpus} (lower --ray-workers or --ray-cpus-per-worker)"
            )
        per_worker = {"num_cpus": cpus}
    n = min(n, n_todo)
    plan = WorkerPlan(
        settings=_absolute_paths(settings),
        metric_names=[m.name for m in metrics],
        needed_names=[m.name for m in needed],
        expected=expected_models(settings, needed, judge, embedder),
        version=__version__,
        prompt_hashes=prompts.worker_prompt_hashes(metrics),
        models_dir=str(options.models_dir) if options.models_dir is not None else None,
        judge=judge,
        embedder=embedder,
        cpus=None if gpus else cpus,
    )
    actor_cls = ray.remote(EvalWorker).options(
        max_restarts=0, scheduling_strategy="SPREAD", **per_worker
    )
    header, blob = seal_plan(plan)  # a worker checks the header before it unpickles the blob
    backends.actors = [actor_cls.remote(header, blob) for _ in range(n)]
    if backends.log:
        where = "1 GPU" if gpus else f"{cpus} CPUs"
        backends.log(f"ray: starting {n} worker(s) of {where} each at {backends.address}")
    refs = [a.load.remote() for a in backends.actors]
    _, pending = ray.wait(refs, num_returns=len(refs), timeout=options.start_timeout_s)
    if pending:
        raise ConfigError(
            f"ray: {len(pending)} of {n} worker(s) did not start within "
            f"{options.start_timeout_s:.0f} s (not enough free CPUs/GPUs on the cluster?)"
        )
    infos = []
    for ref in refs:
        try:
            info = ray.get(ref)
        except Exception as exc:
            first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
            raise ModelError(f"ray: a worker could not start: {first}") from None
        if "error" in info:
            raise ModelError(info["error"])
        check_ray_version(info.get("ray_version", "unknown"), f"node {info.get('node')}")
        infos.append({**info, "samples": 0, "lost": False})
    for role in ("judge", "embedder"):  # the run never mixes models
        seen = {i[f"{role}_sha256"]: i["node"] for i in infos}
        if len(seen) > 1:
            detail = ", ".join(f"node {node} has {sha[:16] if sha else 'none'}…"
                               for sha, node in seen.items())
            raise ModelError(f"ray: the workers hold different {role} models ({detail}); "
                             "give every node the same files")
    backends.workers = infos
    backends.alive = list(range(n))
    backends.info = dict(infos[0]["models"])
    backends.stats = JudgeStats() if backends.info.get("judge") else None
    backends.encoded = 0 if backends.info.get("embedder") else None
    if backends.log:
        nodes = len({i["node"] for i in infos})
        backends.log(f"ray: {n} worker(s) ready on {nodes} node(s): {infos[0]['device']}")


def _absolute_paths(settings: Settings) -> Settings:
    """Paths the user gave that exist here, made absolute (the workers' cwd is not ours)."""
    update = {}
    for key in ("judge_model", "embedder", "cache", "fake_answers"):
        value = getattr(settings, key)
        if value is not None and (Path(value).exists() or key == "cache"):
            update[key] = Path(value).resolve()
    return settings.model_copy(update=update)


def expected_models(
    settings: Settings, needed: list[Metric], judge: Any, embedder: Any
) -> list[ExpectedModel]:
    """The model files every worker must hold, with the sha256 this machine expects."""
    from localeval import models

    manifest = models.load_manifest()
    profile = manifest.profile(settings.profile)
    out: list[ExpectedModel] = []

    def user_file(role: str, path: Path) -> ExpectedModel:
        if path.exists():  # hashed here: every worker must hold the very same file
            return ExpectedModel(role, models.sha256_of_user_path(path), path=str(path.resolve()))
        return ExpectedModel(role, "", path=str(path))

    if any(m.uses_judge for m in needed) and judge is None and settings.judge != "fake":
        if settings.judge_model is not None:
            out.append(user_file("judge", Path(settings.judge_model)))
        else:
            spec = manifest.get(profile["judge"])
            out.append(ExpectedModel("judge", models.expected_sha256(spec), spec=spec))
    if any(m.needs_embedder(settings) for m in needed) and embedder is None:
        if settings.embedder is not None:
            out.append(user_file("embedder", Path(settings.embedder)))
        elif settings.judge != "fake":  # missing: the worker falls back as a local run would
            spec = manifest.get(profile["embedder"])
            out.append(
                ExpectedModel("embedder", models.expected_sha256(spec), spec=spec, required=False)
            )
    return out
