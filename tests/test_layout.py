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
