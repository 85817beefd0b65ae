"""Ray's trust model without Ray: a worker refuses a plan from a driver of another localeval
version before it unpickles it, and the driver refuses to join with a Ray older than the floor
(pyproject's, `distributed.options.RAY_MIN`) on itself or on a worker. Fakes stand in for Ray."""

from __future__ import annotations

import pickle
import re
import sys
import types
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
