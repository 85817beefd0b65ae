"""The shape of the package: the import contracts of pyproject.toml's [tool.importlinter] hold
(entry points over plug-ins over the core, the core never importing a plug-in, the llama.cpp
engine behind one door, judge/llamacpp/__init__.py, no import cycle), every import counted, those
inside functions too; and a plain run imports no plug-in, nor numpy unless a metric needs it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "localeval"
PLUG_INS = ("localeval.distributed", "localeval.estimate", "localeval.meta_eval",
            "localeval.verifier", "localeval.generate", "localeval.retrieval", "localeval.labels",
            "localeval.labelpage", "localeval.report.compare", "localeval.report.meta_eval_page",
            "localeval.cli.estimate")
"""What a plain `run --metrics faithfulness` must not import."""


def _lint_imports(root: Path, config: Path) -> subprocess.CompletedProcess[str]:
    tool = Path(sys.executable).with_name("lint-imports")
    command = [str(tool)] if tool.exists() else [shutil.which("lint-imports") or "lint-imports"]
    env = {**os.environ, "PYTHONPATH": str(root)}
    return subprocess.run([*command, "--no-cache", "--no-logo", str(config)], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_import_contracts_hold() -> None:
    done = _lint_imports(REPO, REPO / "pyproject.toml")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "0 broken" in done.stdout


def test_the_contracts_catch_a_core_module_that_imports_a_plug_in(tmp_path: Path) -> None:
    copy = tmp_path / "repo"
    shutil.copytree(PACKAGE, copy / "localeval",
                    ignore=shutil.ignore_patterns("__pycache__", "*.md", "*.jsonl"))
    shutil.copy(REPO / "pyproject.toml", copy / "pyproject.toml")
    results = copy / "localeval" / "results" / "summary.py"
    results.write_text(results.read_text(encoding="utf-8")
                       + "\n\ndef _verifier() -> object:\n"
                         "    from localeval.verifier import head\n\n    return head\n",
                       encoding="utf-8")
    done = _lint_imports(copy, copy / "pyproject.toml")
    assert done.returncode == 1
    assert "localeval.results.summary -> localeval.verifier.head" in done.stdout


ROUTE = """
import sys
from localeval.cli import main
status = main(sys.argv[2:])
with open(sys.argv[1], "w", encoding="utf-8") as f:
    f.write("\\n".join(sorted(m for m in sys.modules if m.split(".")[0] == "localeval")))
sys.exit(status)
"""


def _fake_run(tmp_path: Path, code: list[str], metric: str,
              answer: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    """`python -c CODE… run` of one row with the fake judge and one queued answer."""
    data, answers = tmp_path / "d.jsonl", tmp_path / "a.json"
    data.write_text(json.dumps({"id": "1", "question": "Where is the tower?",
                                "answer": "The tower is in Paris.",
                                "contexts": ["The tower stands in Paris."]}) + "\n",
                    encoding="utf-8")
    answers.write_text(json.dumps([answer]), encoding="utf-8")
    return subprocess.run(
        [sys.executable, "-c", *code, "run", str(data), "--out", str(tmp_path / "o"),
         "--metrics", metric, "--judge", "fake", "--fake-answers", str(answers),
         "--no-cache", "--quiet"], cwd=REPO, capture_output=True, text=True, timeout=300)


def test_a_plain_run_imports_no_plug_in(tmp_path: Path) -> None:
    listed = tmp_path / "modules.txt"
    done = _fake_run(tmp_path, [ROUTE, str(listed)], "faithfulness",
                     {"verdicts": [{"verdict": 1}]})
    assert done.returncode == 0, done.stderr
    modules = listed.read_text(encoding="utf-8").split()
    assert "localeval.runner" in modules and "localeval.report" in modules
    loaded = [m for m in modules if any(m == p or m.startswith(p + ".") for p in PLUG_INS)]
    assert loaded == []


HEAVY = """
import sys
from localeval.cli import main
status = main(sys.argv[1:])
print(" ".join(sorted(m for m in ("numpy", "torch", "llama_cpp") if m in sys.modules)))
sys.exit(status)
"""


def test_a_plain_run_whose_metrics_need_no_numpy_imports_none(tmp_path: Path) -> None:
    # rerank_relevancy: a judge metric that reads no claim check (checks.closest_sentence, on
    # every verdict of the claim metrics, uses numpy); one row: a mean of one value needs none
    done = _fake_run(tmp_path, [HEAVY], "rerank_relevancy", {"rating": 3, "reason": "r"})
    assert done.returncode == 0, done.stderr
    record = json.loads((tmp_path / "o" / "results.jsonl").read_text(encoding="utf-8"))
    assert record["scores"]["rerank_relevancy"] == 1.0
    assert done.stdout.split() == []


def test_the_tally_without_numpy_gives_numpy_s_figures() -> None:
    from localeval.results.tally import _mean, bootstrap_ci

    assert _mean([]) is None and _mean([0.1]) == 0.1 and bootstrap_ci([0.1]) is None
    assert _mean([0.1, 0.2, 0.4]) == float(__import__("numpy").mean([0.1, 0.2, 0.4]))


ROUTE_LIMIT = 62
"""The localeval modules a plain `run --metrics faithfulness` with the real judge may import
(research/house/README.md measures the route): 60, and the shield's meaning head with the
embedder it reads (metrics/shield_meaning.py, models/embed.py)."""


@pytest.mark.model
def test_a_plain_run_with_the_real_judge_imports_at_most_62_modules(tmp_path: Path) -> None:
    from tests.conftest import _need, model_path

    judge = _need(model_path("tiny"))
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "1", "question": "Where is the tower?",
                                "answer": "The tower is in Paris.",
                                "contexts": ["The tower stands in Paris."]}) + "\n",
                    encoding="utf-8")
    listed = tmp_path / "modules.txt"
    done = subprocess.run(
        [sys.executable, "-c", ROUTE, str(listed), "run", str(data), "--out", str(tmp_path / "o"),
         "--metrics", "faithfulness", "--judge-model", str(judge), "--n-ctx", "2048",
         "--no-cache", "--quiet"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    modules = listed.read_text(encoding="utf-8").split()
    assert "localeval.judge.llamacpp.engine" in modules  # the real judge ran
    assert [m for m in modules if any(m == p or m.startswith(p + ".") for p in PLUG_INS)] == []
    assert len(modules) <= ROUTE_LIMIT, modules


def test_every_package_lists_its_public_names() -> None:
    missing = [str(p.relative_to(PACKAGE)) for p in PACKAGE.rglob("__init__.py")
               if "__all__" not in p.read_text(encoding="utf-8")]
    assert missing == []


def test_both_executors_have_the_executor_protocol() -> None:
    from localeval.distributed.executor import RayExecutor, ray_executor
    from localeval.executor import Executor, LocalExecutor

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
