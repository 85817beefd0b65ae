"""One Ray worker: checks its model files, loads the judge and the embedder once, then evaluates
the samples the driver hands it with the same per-sample code as a local run
(`executor.evaluate_sample`), many at once so their judge requests share decode steps.

The class is plain Python; the driver turns it into a Ray actor (`ray.remote(EvalWorker)`).
The plan travels as a version header (a plain string, which Ray carries without pickle) and a
pickled blob: a worker of another localeval version refuses it before unpickling anything.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from localeval.config import Settings
from localeval.data.dataset import Sample
from localeval.errors import LocalevalError, ModelError
from localeval.results import SampleRecord


@dataclass(frozen=True)
class ExpectedModel:
    """A model file the driver expects every worker to hold, with its sha256.

    `spec` (a models.ModelSpec) for a manifest model, found under the worker's models folder;
    `path` for a file the user named (--judge-model, --embedder). `required=False`: a missing
    file is allowed (the embedder falls back as in a local run) but a differing one is not.
    """

    role: str
    sha256: str
    spec: Any = None
    path: str | None = None
    required: bool = True


@dataclass(frozen=True)
class WorkerPlan:
    """What the driver tells every worker."""

    settings: Settings
    metric_names: list[str]  # the run's metrics (evaluate_sample skips what a row cannot feed)
    needed_names: list[str]  # the metrics some unfinished row can feed: what to load for
    expected: list[ExpectedModel]
    version: str
    prompt_hashes: dict[str, str]
    models_dir: str | None = None
    judge: Any = None  # a Judge object (tests, the API) copied to every worker
    embedder: Any = None
    cpus: int | None = None  # CPU worker: llama.cpp threads when --threads is not given


def check_prompts(metrics: list[Any], driver: dict[str, str], node: str) -> None:
    """Refuse a worker whose templates for these metrics (prompts.worker_prompt_hashes: every
    template the run can render, system prompts and conversations' included) are not the
    driver's, naming the ones that differ."""
    from localeval import prompts

    mine = prompts.worker_prompt_hashes(metrics)
    differ = sorted(n for n in set(mine) | set(driver) if mine.get(n) != driver.get(n))
    if differ:
        named = ", ".join(f"{n} ({_how_differs(n, mine, driver)})" for n in differ[:5])
        if len(differ) > 5:
            named += f" and {len(differ) - 5} more"
        raise LocalevalError(
            f"ray worker on node {node} has other prompt templates than the driver: {named} "
            f"(prompts folder {prompts.PROMPTS_DIR}); install the same localeval everywhere")


def _how_differs(name: str, mine: dict[str, str], driver: dict[str, str]) -> str:
    if name not in mine:
        return "missing here"
    return "not on the driver" if name not in driver else "another text"


def node_name() -> str:
    return socket.gethostname()


def _device(cpus: int | None) -> str:
    try:
        import ray

        gpus = [str(g) for g in ray.get_gpu_ids()]
    except Exception:  # not inside Ray (a plain test of this class)
        gpus = []
    if not gpus:
        return f"cpu ({cpus or os.cpu_count()} threads)"
    name = ""
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        name = subprocess.run(
            ["nvidia-smi", "--query-gpu=name", "--format=csv,noheader", "-i", gpus[0]],
            capture_output=True, text=True, timeout=10,
        ).stdout.strip()
    return f"gpu {','.join(gpus)}" + (f" ({name})" if name else "")


def verify_models(expected: list[ExpectedModel], node: str) -> dict[str, str]:
    """Check each expected file by sha256 before anything loads it; role → sha256 checked.

    Raises ModelError naming the node and the file when one is missing or differs."""
    from localeval import models

    checked: dict[str, str] = {}
    for want in expected:
        if want.path is not None:
            path = Path(want.path)
            if not path.exists():
                raise ModelError(f"ray worker on node {node}: {want.role} model {path} not found")
            got = models.sha256_of_user_path(path)
            if want.sha256 and got != want.sha256:
                raise ModelError(
                    f"ray worker on node {node}: {want.role} model {path} has sha256 {got[:16]}…, "
                    f"the driver's has {want.sha256[:16]}…; give every node the same file"
                )
            checked[want.role] = got
            continue
        spec = want.spec
        if want.sha256 and not spec.sha256:  # unpinned in the manifest: the driver's record wins
            import dataclasses

            spec = dataclasses.replace(spec, sha256=want.sha256)
        state = models.check(spec, full=False)
        if state.state == "missing" and not want.required:
            continue
        if not state.ok:
            raise ModelError(
                f"ray worker on node {node}: {want.role} model {spec.name} file {state.path}: "
                f"{state.detail} (copy the models/ folder to every node, or give --ray-models "
                "DIR on a shared filesystem)"
            )
        checked[want.role] = models.expected_sha256(spec)
    return checked


def seal_plan(plan: WorkerPlan) -> tuple[str, bytes]:
    """The plan as (version header, pickled blob) for `EvalWorker(header, blob)`."""
    try:
        from ray import cloudpickle as pickler  # the caller's own judge classes, as Ray would
    except ImportError:  # tests of this module without Ray
        pickler = pickle
    return plan.version, pickler.dumps(plan)


def open_plan(header: str, blob: bytes, node: str) -> WorkerPlan:
    """Check the driver's version header, and only then unpickle its plan."""
    from localeval.version import __version__

    if not isinstance(header, str) or header != __version__:
        shown = header[:40] if isinstance(header, str) else type(header).__name__
        raise LocalevalError(
            f"ray worker on node {node} runs localeval {__version__}, the driver {shown!r}; "
            "install the same version on every node (its plan was not unpickled)"
        )
    plan = pickle.loads(blob)  # the driver's own plan, its version checked above
    if not isinstance(plan, WorkerPlan):
        raise LocalevalError(f"ray worker on node {node}: the driver sent no plan")
    return plan


class EvalWorker:
    """Holds the loaded backends of one worker; `evaluate` runs one sample."""

    def __init__(self, header: str, blob: bytes) -> None:
        self.header = header
        self.blob: bytes | None = blob
        self.plan: WorkerPlan | None = None
        self.node = node_name()
        self.backends: Any = None
        self.metrics: list[Any] = []
        self.settings: Settings | None = None
        self._last: dict[str, Any] = {}
        self.samples = 0

    def pid(self) -> int:
        return os.getpid()

    def load(self) -> dict[str, Any]:
        """Verify the model files, then load; {'error': message} instead of raising."""
        try:
            return self._load()
        except LocalevalError as exc:
            return {"error": str(exc), "node": self.node}
        except Exception as exc:  # a broken install on that node: say where
            return {
                "error": f"ray worker on node {self.node}: {type(exc).__name__}: {exc}",
                "node": self.node,
            }

    def _load(self) -> dict[str, Any]:
        from localeval.executor import sample_concurrency
        from localeval.metrics import resolve, shield_meaning
        from localeval.models.backends import build_backends
        from localeval.version import __version__

        plan = self.plan = open_plan(self.header, self.blob or b"", self.node)
        self.blob = None
        if plan.models_dir is not None:
            os.environ["LOCALEVAL_MODELS_DIR"] = plan.models_dir
        if __version__ != plan.version:
            raise LocalevalError(
                f"ray worker on node {self.node} runs localeval {__version__}, the driver "
                f"{plan.version}; install the same version on every node"
            )
        rubrics = plan.settings.rubrics  # the metrics files' content travels in the settings
        check_prompts(resolve(plan.metric_names, rubrics), plan.prompt_hashes, self.node)
        checked = verify_models(plan.expected, self.node)
        settings = plan.settings
        if plan.cpus and settings.n_threads is None:
            settings = settings.model_copy(update={"n_threads": plan.cpus})
        self.settings = settings
        if settings.names_head():  # the verifier plug-in scores the verdicts here too
            import localeval.verifier  # noqa: F401
        self.metrics = resolve(plan.metric_names, rubrics)
        needed = [m for m in self.metrics if m.name in set(plan.needed_names)]
        try:
            self.backends = build_backends(settings, needed, judge=plan.judge,
                                           embedder=plan.embedder)
            shield_meaning.note_in(self.backends, settings)
        except LocalevalError as exc:
            raise LocalevalError(f"ray worker on node {self.node}: {exc}") from None
        self._last = self._snapshot()
        info = self.backends.info
        return {
            "node": self.node,
            "ip": _node_ip(),
            "pid": os.getpid(),
            "device": _device(plan.cpus),
            "judge_sha256": (info.get("judge") or {}).get("sha256") or checked.get("judge"),
            "embedder_sha256": (info.get("embedder") or {}).get("sha256")
            or checked.get("embedder"),
            "cache": info.get("cache"),
            "capacity": sample_concurrency(settings, self.backends),
            "ray_version": _ray_version(),
            "models": info,
        }

    async def evaluate(self, sample: Sample) -> tuple[SampleRecord, dict[str, Any]]:
        """One sample through executor.evaluate_sample; with the judge and embedder work done
        since the last reply (summed by the driver into the run's figures)."""
        from localeval.executor import evaluate_sample

        if self.settings is None:
            raise LocalevalError(f"ray worker on node {self.node}: evaluate before load")
        record = await evaluate_sample(sample, self.metrics, self.settings, self.backends)
        self.samples += 1
        now = self._snapshot()
        delta = _delta(self._last, now)
        self._last = now
        return record, delta

    def close(self) -> int:
        if self.backends is not None:
            self.backends.close()
            self.backends = None
        return self.samples

    def _snapshot(self) -> dict[str, Any]:
        b = self.backends
        out: dict[str, Any] = {}
        if b is not None and b.judge is not None:
            s = b.judge.stats
            out = {k: getattr(s, k) for k in STAT_FIELDS}
            out["steps"] = {k: dict(v) for k, v in s.steps.items()}
        if b is not None and b.embeddings is not None:
            out["encoded"] = b.embeddings.encoded
        return out


STAT_FIELDS = ("failures", "own_tokens", "choices")
"""JudgeStats' run-wide counts; its per-step figures travel as `steps`."""


def _delta(before: dict[str, Any], now: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in now.items():
        if key == "steps":
            old_steps = before.get("steps", {})
            changed = {s: {k: v - old_steps.get(s, {}).get(k, 0) for k, v in figures.items()}
                       for s, figures in value.items() if figures != old_steps.get(s)}
            if changed:
                out["steps"] = changed
        elif value != before.get(key, 0):
            out[key] = value - before.get(key, 0)
    return out


def _node_ip() -> str | None:
    try:
        import ray

        return str(ray.util.get_node_ip_address())
    except Exception:
        return None


def _ray_version() -> str:
    try:
        import ray

        return str(ray.__version__)
    except Exception:  # a plain test of this class, without Ray
        return "unknown"
