"""`--ray`: a local Ray instance with 2 workers gives the results of a local run; a worker killed
mid-run costs only a resend of its unfinished samples; Ctrl-C on the driver then --resume
finishes without resending a done sample; workers refuse missing or differing model files."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from ray_judges import ContentJudge, KillerJudge

from localeval.config import Settings
from localeval.distributed import RayOptions
from localeval.errors import ConfigError, ModelError
from localeval.models.embed import HashEmbedder
from localeval.runner import run as run_here
from tests.signals import default_dispositions

HERE = Path(__file__).resolve().parent
REPO = HERE.parent

if os.environ.get("CI"):
    import ray  # CI installs the dev extra, which has Ray: a missing Ray fails here
else:
    ray = pytest.importorskip("ray")

TWO = RayOptions(workers=2, cpus_per_worker=1)


def run(rows: Any, out: Path | None, settings: Settings, *, ray: Any = None, judge: Any = None,
        embedder: Any = None, **kwargs: Any) -> Any:
    """runner.run in this process, or on Ray workers when `ray` names them."""
    from localeval.distributed.executor import ray_executor

    executor = None if ray is None else ray_executor(ray, judge=judge, embedder=embedder)
    return run_here(rows, out, settings, judge=judge, embedder=embedder, executor=executor,
                    **kwargs)


@pytest.fixture(scope="module")
def cluster():  # type: ignore[no-untyped-def]
    """One local Ray instance (4 logical CPUs) for the module. Its workers import this checkout
    and tests/ (for the judges), also those of other drivers that join it by address."""
    from localeval.distributed.executor import init_local

    if ray.is_initialized():
        ray.shutdown()
    old = os.environ.get("PYTHONPATH")
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), str(HERE), old) if p)
    init_local(4)
    yield ray.get_runtime_context().gcs_address
    ray.shutdown()
    if old is None:
        os.environ.pop("PYTHONPATH", None)
    else:
        os.environ["PYTHONPATH"] = old


def _rows(n: int) -> list[dict[str, Any]]:
    return [{"id": f"s{i}", "question": f"What is item {i}?",
             "answer": f"Item {i} is a thing numbered {i * 7}.",
             "ground_truth": f"Item {i} is number {i * 7}." if i % 3 else None,
             "contexts": [f"Item {i} is described here with number {i * 7}."]} for i in range(n)]


def _settings(**kw: Any) -> Settings:
    return Settings(metrics=["faithfulness", "answer_similarity"], language="en", parallel=2,
                    **kw)


def _lines(out: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (out / "results.jsonl").read_text().splitlines() if x.strip()]


def test_two_workers_give_the_results_of_a_local_run(cluster: str, tmp_path: Path) -> None:
    rows = _rows(12)
    local = run(rows, tmp_path / "local", _settings(no_cache=True), judge=ContentJudge(),
                embedder=HashEmbedder())
    dist = run(rows, tmp_path / "ray", _settings(no_cache=True), judge=ContentJudge(),
               embedder=HashEmbedder(), ray=TWO)
    a = (tmp_path / "local" / "results.jsonl").read_text()
    assert a == (tmp_path / "ray" / "results.jsonl").read_text()
    assert len(_lines(tmp_path / "ray")) == 12
    assert dist.summary["metrics"] == local.summary["metrics"]
    assert dist.summary["judge"] == local.summary["judge"]
    assert dist.summary["embedder"]["texts_encoded"] > 0  # each worker encodes what it needs
    info = dist.summary["ray"]
    assert info["retried"] == 0 and info["samples_sent"] == 12
    assert len(info["workers"]) == 2
    assert all(w["samples"] > 0 and w["judge_sha256"] == "content-v1" for w in info["workers"])
    assert sum(w["samples"] for w in info["workers"]) == 12
    assert {w["node"] for w in info["workers"]} == {socket.gethostname()}
    assert dist.summary["models"]["judge"]["sha256"] == "content-v1"


def test_a_killed_worker_costs_only_its_unfinished_samples(
    cluster: str, tmp_path: Path
) -> None:
    rows = _rows(12)
    reference = run(rows, tmp_path / "local", _settings(no_cache=True), judge=ContentJudge(),
                    embedder=HashEmbedder())
    marker = tmp_path / "killed.pid"
    logged: list[str] = []
    dist = run(rows, tmp_path / "ray", _settings(no_cache=True),
               judge=KillerJudge(marker, after=4), embedder=HashEmbedder(), ray=TWO,
               log=logged.append)
    assert marker.read_text().strip().isdigit(), "no worker killed itself"
    records = _lines(tmp_path / "ray")
    assert sorted(r["id"] for r in records) == sorted(r["id"] for r in rows)
    assert [r.scores for r in dist.records] == [r.scores for r in reference.records]
    info = dist.summary["ray"]
    assert info["retried"] >= 1
    assert info["samples_sent"] == 12 + info["retried"]
    assert [w["lost"] for w in info["workers"]].count(True) == 1
    assert sum(w["samples"] for w in info["workers"]) == 12
    assert any("was lost" in line for line in logged)
    assert dist.summary["complete"] is True


DRIVER = """
import json, sys
from pathlib import Path
sys.path.insert(0, {tests!r})
from ray_judges import ContentJudge
from localeval.config import Settings
from localeval.distributed import RayOptions
from localeval.distributed.executor import ray_executor
from localeval.models.embed import HashEmbedder
from localeval.results import RunInterrupted
from localeval.runner import run

data, out, cache, address, resume = sys.argv[1:6]
settings = Settings(metrics=["faithfulness"], language="en", parallel=1, cache=Path(cache))
workers = ray_executor(RayOptions(address=address, workers=2, cpus_per_worker=1),
                       judge=ContentJudge(0.25), embedder=HashEmbedder())
try:
    outcome = run(data, Path(out), settings, executor=workers, resume=resume == "1")
except RunInterrupted as exc:
    print(exc, file=sys.stderr)
    sys.exit(130)
print(json.dumps(outcome.summary["ray"]))
"""


def test_ctrl_c_on_the_driver_then_resume_finishes(cluster: str, tmp_path: Path) -> None:
    n = 16
    rows = _rows(n)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    script = tmp_path / "driver.py"
    script.write_text(DRIVER.format(tests=str(HERE)))
    out, cache = tmp_path / "out", tmp_path / "cache.sqlite"
    cmd = [sys.executable, str(script), str(data), str(out), str(cache), cluster]
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen([*cmd, "0"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=env, preexec_fn=default_dispositions)
    results = out / "results.jsonl"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline and proc.poll() is None:
        if results.is_file() and len(results.read_text().splitlines()) >= 3:
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    done = len(_lines(out))
    assert 3 <= done < n, f"{done} samples done before Ctrl-C"

    again = subprocess.run([*cmd, "1"], capture_output=True, text=True, env=env, timeout=120)
    assert again.returncode == 0, again.stderr
    info = json.loads(again.stdout.strip().splitlines()[-1])
    assert info["samples_sent"] == n - done  # no sample the driver already held was sent again
    records = _lines(out)
    assert sorted(r["id"] for r in records) == sorted(r["id"] for r in rows)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["complete"] is True
    assert summary["resumed"] == {"samples_from_earlier_sessions": done}
    reference = run(rows, None, Settings(metrics=["faithfulness"], language="en", no_cache=True),
                    judge=ContentJudge(0.0), embedder=HashEmbedder())
    by_id = {r["id"]: r["scores"] for r in records}
    assert by_id == {r.id: r.scores for r in reference.records}


def test_workers_refuse_missing_or_differing_model_files(cluster: str, tmp_path: Path) -> None:
    from localeval.models import load_manifest

    manifest = load_manifest()
    spec = manifest.get(manifest.profile("tiny")["judge"])
    settings = Settings(profile="tiny", metrics=["faithfulness"], no_cache=True)
    rows = _rows(2)
    node = socket.gethostname()
    empty = tmp_path / "empty-models"
    empty.mkdir()
    with pytest.raises(ModelError) as missing:
        run(rows, None, settings, ray=RayOptions(workers=1, cpus_per_worker=1, models_dir=empty))
    message = str(missing.value)
    assert f"node {node}" in message and str(empty / spec.filename) in message
    assert "not found" in message

    other = tmp_path / "other-models"
    other.mkdir()
    (other / spec.filename).write_bytes(b"GGUF" + b"\0" * 1000)  # a different file, same name
    with pytest.raises(ModelError) as differs:
        run(rows, None, settings, ray=RayOptions(workers=1, cpus_per_worker=1, models_dir=other))
    message = str(differs.value)
    assert f"node {node}" in message and str(other / spec.filename) in message
    assert "expected" in message or "does not match" in message


def test_resumed_finished_run_starts_no_worker(cluster: str, tmp_path: Path) -> None:
    rows = _rows(3)
    settings = _settings(no_cache=True)
    run(rows, tmp_path / "out", settings, judge=ContentJudge(0.0), embedder=HashEmbedder())
    again = run(rows, tmp_path / "out", settings, judge=ContentJudge(0.0),
                embedder=HashEmbedder(), ray=TWO, resume=True)
    assert again.summary["ray"]["workers"] == [] and again.summary["ray"]["samples_sent"] == 0
    assert again.summary["complete"] is True


def test_more_workers_than_the_cluster_holds_is_a_one_line_error(
    cluster: str, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="need 20 CPUs; the cluster has 4"):
        run(_rows(3), None, _settings(no_cache=True), judge=ContentJudge(0.0),
            embedder=HashEmbedder(), ray=RayOptions(workers=10, cpus_per_worker=2))


def test_cli_ray_flags_and_the_api_keyword(cluster: str, tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    from localeval import evaluate
    from localeval.cli import main

    rows = _rows(6)
    data = tmp_path / "data.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    base = ["run", str(data), "--judge", "fake", "--metrics", "answer_similarity", "--quiet"]
    assert main([*base, "--out", str(tmp_path / "local")]) == 0
    ray_flags = ["--ray", "--ray-workers", "2", "--ray-cpus-per-worker", "1"]
    assert main([*base, "--out", str(tmp_path / "ray"), *ray_flags]) == 0
    a = (tmp_path / "local" / "results.jsonl").read_text()
    assert a == (tmp_path / "ray" / "results.jsonl").read_text()
    summary = json.loads((tmp_path / "ray" / "summary.json").read_text())
    assert len(summary["ray"]["workers"]) == 2 and summary["complete"] is True

    results = evaluate(rows, "faithfulness", judge=ContentJudge(0.0), embedder=HashEmbedder(),
                       language="en", no_cache=True, ray={"workers": 2, "cpus_per_worker": 1})
    local = evaluate(rows, "faithfulness", judge=ContentJudge(0.0), embedder=HashEmbedder(),
                     language="en", no_cache=True)
    assert results.metrics == local.metrics
    assert len(results.summary["ray"]["workers"]) == 2

    capsys.readouterr()
    code = main([*base, "--out", str(tmp_path / "x"), "--ray-workers", "2"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and err == ["localeval: error: --ray-workers, --ray-cpus-per-worker and "
                                 "--ray-models need --ray"]


def test_ray_options_coercion() -> None:
    assert RayOptions.coerce(True).address == "local"
    assert RayOptions.coerce("auto").address == "auto"
    assert RayOptions.coerce({"address": "10.0.0.1:6379", "workers": 3}).workers == 3
    with pytest.raises(ConfigError, match="workers"):
        RayOptions.coerce({"workers": 0})
    with pytest.raises(ConfigError, match="ray= must be"):
        RayOptions.coerce(5)


@pytest.mark.model
def test_tiny_model_through_ray_scores_as_a_local_run(cluster: str, tmp_path: Path) -> None:
    from conftest import _need, model_path

    _need(model_path("tiny"))
    pytest.importorskip("llama_cpp")
    rows = [{"id": "a", "question": "What is the capital of France?",
             "answer": "Paris is the capital of France.",
             "contexts": ["Paris is the capital and largest city of France."]}]
    settings = Settings(profile="tiny", metrics=["faithfulness"], no_cache=True, n_ctx=2048,
                        parallel=1, n_threads=2, language="en", max_tokens=200, explain=False)
    local = run(rows, tmp_path / "local", settings)
    dist = run(rows, tmp_path / "ray", settings, ray=RayOptions(workers=1, cpus_per_worker=2))
    assert local.records[0].scores.get("faithfulness") is not None  # scored, not errored
    assert [r.scores for r in dist.records] == [r.scores for r in local.records]
    assert [r.details for r in dist.records] == [r.details for r in local.records]
    assert [r.errors for r in dist.records] == [r.errors for r in local.records]
    assert dist.summary["judge"]["calls"] == local.summary["judge"]["calls"] > 0
    worker = dist.summary["ray"]["workers"][0]
    assert worker["judge_sha256"] == local.summary["models"]["judge"]["sha256"]


def test_rubrics_of_a_metrics_file_run_on_the_workers(cluster: str, tmp_path: Path) -> None:
    """The rubrics travel in the run's settings: the workers read no metrics file (it is gone
    before they start) and give the results of a local run."""
    from ray_judges import RubricJudge

    from localeval.config import load_config

    path = tmp_path / "rubrics.toml"
    path.write_text('[covers_question]\nrequires = ["question", "answer"]\n'
                    'criteria = "The answer answers every part of the question."\n'
                    'scale = [1, 5]\n\n[grounded]\nrequires = ["answer", "contexts"]\n'
                    'criteria = { en = "Every claim is in the context." }\nscale = "yes/no"\n',
                    encoding="utf-8")
    settings = load_config(None, {"metrics_files": [path], "no_cache": True, "language": "en",
                                  "metrics": ["covers_question", "grounded"]})
    path.unlink()
    rows = _rows(6)
    run(rows, tmp_path / "local", settings, judge=RubricJudge(), embedder=HashEmbedder())
    run(rows, tmp_path / "ray", settings, judge=RubricJudge(), embedder=HashEmbedder(), ray=TWO)
    local = (tmp_path / "local" / "results.jsonl").read_text()
    assert local == (tmp_path / "ray" / "results.jsonl").read_text()
    assert all({"covers_question", "grounded.greedy"} <= r["scores"].keys()
               for r in _lines(tmp_path / "ray"))
