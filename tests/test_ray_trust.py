"""Ray's trust model without Ray: a worker refuses a plan from a driver of another localeval
version before it unpickles it, and the driver refuses to join with a Ray older than the floor
(pyproject's, `distributed.options.RAY_MIN`) on itself or on a worker. Fakes stand in for Ray."""

from __future__ import annotations

import pickle
import re
import sys
import types
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from localeval import __version__
from localeval.config import Settings
from localeval.distributed import RayOptions
from localeval.distributed.options import RAY_MIN, check_ray_version
from localeval.distributed.worker import EvalWorker, WorkerPlan, open_plan, seal_plan
from localeval.errors import ConfigError, LocalevalError
from localeval.executor import Work

REPO = Path(__file__).resolve().parent.parent


class _Trap:
    """Unpickling this creates `path`: the proof that a blob was (or was not) unpickled."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (open, (str(self.path), "w"))


def test_a_worker_refuses_another_version_before_unpickling(tmp_path: Path) -> None:
    marker = tmp_path / "unpickled"
    blob = pickle.dumps(_Trap(marker))
    worker = EvalWorker("0.0.1-another", blob)
    out = worker.load()
    assert "error" in out and "0.0.1-another" in out["error"] and __version__ in out["error"]
    assert not marker.exists()  # nothing of the driver's was unpickled
    # the same blob behind the right version is unpickled (so the header is what stopped it),
    # and what it holds is still refused: it is no plan
    out = EvalWorker(__version__, blob).load()
    assert marker.exists() and "sent no plan" in out["error"]


def test_a_non_string_header_is_refused_without_unpickling(tmp_path: Path) -> None:
    marker = tmp_path / "unpickled"
    with pytest.raises(LocalevalError, match="not unpickled"):
        open_plan(pickle.dumps(_Trap(marker)), pickle.dumps(_Trap(marker)), "n1")  # type: ignore[arg-type]
    assert not marker.exists()


def test_a_sealed_plan_opens_on_the_same_version() -> None:
    plan = WorkerPlan(settings=Settings(), metric_names=["response_length"],
                      needed_names=["response_length"], expected=[], version=__version__,
                      prompt_hashes={})
    header, blob = seal_plan(plan)
    assert header == __version__ and isinstance(blob, bytes)
    assert open_plan(header, blob, "n1") == plan


@pytest.mark.parametrize("version", ["2.9.3", "2.52.0", "2.59.9", "1.13.0", "", "unknown", "two.x"])
def test_ray_below_the_floor_is_refused(version: str) -> None:
    with pytest.raises(ConfigError, match=r"Ray >= 2\.60"):
        check_ray_version(version)


@pytest.mark.parametrize("version", ["2.60.0", "2.61.0rc1", "3.0.0"])
def test_ray_at_or_above_the_floor_is_accepted(version: str) -> None:
    check_ray_version(version)


def test_the_floor_is_pyprojects() -> None:
    text = (REPO / "pyproject.toml").read_text(encoding="utf-8")
    floors = set(re.findall(r'"ray>=([0-9.]+)"', text))
    assert floors == {".".join(map(str, RAY_MIN))}


def _fake_ray(version: str, calls: list[str]) -> types.ModuleType:
    fake = types.ModuleType("ray")
    fake.__version__ = version  # type: ignore[attr-defined]

    def record(name: str):  # type: ignore[no-untyped-def]
        def call(*args, **kwargs):  # type: ignore[no-untyped-def]
            calls.append(name)
            raise AssertionError(f"ray.{name} called on a refused Ray")
        return call

    for name in ("init", "is_initialized", "cluster_resources", "remote", "shutdown"):
        setattr(fake, name, record(name))
    return fake


def test_the_driver_refuses_an_old_ray_before_joining(monkeypatch: pytest.MonkeyPatch) -> None:
    from localeval.data.dataset import Sample
    from localeval.distributed.executor import RayExecutor
    from localeval.metrics import resolve

    calls: list[str] = []
    monkeypatch.setitem(sys.modules, "ray", _fake_ray("2.9.0", calls))
    metrics = resolve(["response_length"])
    work = Work(settings=Settings(), metrics=metrics, needed=metrics,
                todo=[Sample(id="a", line=1, answer="x")])
    with pytest.raises(ConfigError, match=r"Ray '2\.9\.0'; localeval needs Ray >= 2\.60"):
        RayExecutor(options=RayOptions(address="auto")).start(work)
    assert calls == []  # neither joined nor started anything


@dataclass
class WorkerPrompts:
    """A worker's prompts folder: a copy of the driver's, read in its place once `use`d (the
    driver's hashes are taken before)."""

    root: Path
    monkeypatch: pytest.MonkeyPatch

    def use(self) -> None:
        from localeval import prompts

        self.monkeypatch.setattr(prompts, "PROMPTS_DIR", self.root)
        prompts.template_sha256.cache_clear()


@pytest.fixture
def worker_prompts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[WorkerPrompts]:
    import shutil

    from localeval import prompts

    shutil.copytree(prompts.PROMPTS_DIR, tmp_path / "worker-prompts")
    yield WorkerPrompts(tmp_path / "worker-prompts", monkeypatch)
    monkeypatch.undo()
    prompts.template_sha256.cache_clear()


@pytest.mark.parametrize(("metrics", "edited"), [
    (["faithfulness"], "en/conversation_rewrite.j2"),  # a conversation's own step
    (["citations"], "zh/citations_fact.j2"),
    (["context_utilization"], "en/context_recall_verdicts.j2"),  # diagnosis
    (["faithfulness", "quality"], "en/rubric_system.j2"),  # a rubric's system prompt
    (["quality"], "zh/rubric_reason.j2"),
])
def test_a_worker_with_another_template_is_refused(metrics: list[str], edited: str,
                                                   worker_prompts: WorkerPrompts) -> None:
    from localeval import prompts
    from localeval.distributed.worker import check_prompts
    from localeval.metrics import resolve
    from localeval.rubrics import rubric

    run = resolve(metrics, [rubric("quality", criteria={"en": "Is the answer good?",
                                                         "zh": "回答好吗？"})])
    driver = prompts.worker_prompt_hashes(run)
    assert edited in driver
    check_prompts(run, driver, "n1")  # the same templates: accepted
    path = worker_prompts.root / edited
    path.write_text(path.read_text(encoding="utf-8") + "\n.", encoding="utf-8")
    worker_prompts.use()
    with pytest.raises(LocalevalError, match=re.escape(edited)):
        check_prompts(run, driver, "n1")


def test_a_worker_with_an_extra_system_prompt_is_refused(worker_prompts: WorkerPrompts) -> None:
    from localeval import prompts
    from localeval.distributed.worker import check_prompts
    from localeval.metrics import resolve

    run = resolve(["faithfulness"])
    driver = prompts.worker_prompt_hashes(run)
    (worker_prompts.root / "en" / "faithfulness_verdicts_system.j2").write_text("Other.",
                                                                         encoding="utf-8")
    worker_prompts.use()
    with pytest.raises(LocalevalError, match=re.escape("en/faithfulness_verdicts_system.j2")):
        check_prompts(run, driver, "n1")

