"""The shape of the package: no import cycle among localeval's modules, at import time or
through the imports done lazily inside functions (scripts/import_cycles.py)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "import_cycles.py"


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("import_cycles", SCRIPT)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


@pytest.mark.parametrize("lazy", [False, True])
def test_no_import_cycle(lazy: bool) -> None:
    script = _script()
    assert script.cycles(script.graph(script.modules(), lazy)) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    script = _script()
    assert script.cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]


PACKAGE = Path(__file__).resolve().parent.parent / "localeval"


def test_no_module_over_400_lines() -> None:
    long = {str(p.relative_to(PACKAGE)): n for p in PACKAGE.rglob("*.py")
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > 400}
    assert long == {}


def test_every_package_lists_its_public_names() -> None:
    missing = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("__init__.py")
               if "__all__" not in p.read_text(encoding="utf-8")]
    assert missing == []


def test_both_executors_have_the_executor_protocol() -> None:
    from localeval.distributed.driver import RayExecutor
    from localeval.execute import Executor, LocalExecutor
    from localeval.runner import make_executor

    assert isinstance(make_executor(None), LocalExecutor)
    assert isinstance(make_executor({"workers": 1}), RayExecutor)  # Ray starts only in start()
    for executor in (LocalExecutor(), RayExecutor()):
        assert isinstance(executor, Executor)
