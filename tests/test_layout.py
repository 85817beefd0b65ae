"""The shape of the package: no import cycle among localeval's modules, at import time or
through the imports done lazily inside functions (scripts/import_cycles.py)."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "import_cycles.py"
REPO = SCRIPT.parent.parent
PLUG_INS = ("localeval.distributed", "localeval.estimate", "localeval.meta_eval",
            "localeval.verifier", "localeval.generate", "localeval.retrieval", "localeval.labels",
            "localeval.labelpage", "localeval.report.compare", "localeval.report.meta_eval_page",
            "localeval.cli.estimate")
"""What a plain `run --metrics faithfulness` must not import."""




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


ROUTE = """
import sys
from localeval.cli import main
status = main(sys.argv[2:])
with open(sys.argv[1], "w", encoding="utf-8") as f:
    f.write("\\n".join(sorted(m for m in sys.modules if m.split(".")[0] == "localeval")))
sys.exit(status)
"""


def test_a_plain_run_imports_no_plug_in(tmp_path: Path) -> None:
    data, answers = tmp_path / "d.jsonl", tmp_path / "a.json"
    data.write_text(json.dumps({"id": "1", "question": "Where is the tower?",
                                "answer": "The tower is in Paris.",
                                "contexts": ["The tower stands in Paris."]}) + "\n",
                    encoding="utf-8")
    answers.write_text(json.dumps([{"verdicts": [{"verdict": 1}]}]), encoding="utf-8")
    listed = tmp_path / "modules.txt"
    done = subprocess.run(
        [sys.executable, "-c", ROUTE, str(listed), "run", str(data), "--out", str(tmp_path / "o"),
         "--metrics", "faithfulness", "--judge", "fake", "--fake-answers", str(answers),
         "--no-cache", "--quiet"], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    modules = listed.read_text(encoding="utf-8").split()
    assert "localeval.runner" in modules and "localeval.report" in modules
    loaded = [m for m in modules if any(m == p or m.startswith(p + ".") for p in PLUG_INS)]
    assert loaded == []


def test_both_executors_have_the_executor_protocol() -> None:
    from localeval.distributed.driver import RayExecutor, ray_executor
    from localeval.execute import Executor, LocalExecutor

    assert isinstance(ray_executor({"workers": 1}), RayExecutor)  # Ray starts only in start()
    for executor in (LocalExecutor(), RayExecutor()):
        assert isinstance(executor, Executor)


@pytest.mark.parametrize("flag", ["--ray-workers", "--ray-models"])
def test_a_ray_flag_without_ray_is_one_line(flag: str, tmp_path: Path) -> None:
    from localeval.cli import main

    data = tmp_path / "d.jsonl"
    data.write_text('{"id": 1, "answer": "a", "contexts": ["c"]}\n', encoding="utf-8")
    value = "2" if flag == "--ray-workers" else str(tmp_path)
    assert main(["run", str(data), "--out", str(tmp_path / "o"), flag, value]) == 2


def test_the_bare_ray_flag_gives_the_plug_in_s_local_address() -> None:
    from localeval.cli.parser import build_parser
    from localeval.distributed.options import LOCAL

    args = build_parser(["run"]).parse_args(["run", "d.jsonl", "--out", "o", "--ray"])
    assert args.ray == LOCAL
