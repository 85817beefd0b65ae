"""Benchmark `--ray`: the same faithfulness run (a judge that sleeps a fixed time per request,
so the figures measure the distribution, not a model) in this process and on 1, 2 and 4 Ray
workers of a local Ray instance.

    .venv/bin/python scripts/bench/bench_ray.py [--samples 400] [--delay 0.05] [--workers 1,2,4]

Each Ray setting runs the real runner (results.jsonl written and fsynced per sample, as in a
real run); its clocks start when the workers are ready (their start-up is `start_s`). It
reports: throughput (samples/s), scaling efficiency (throughput / (workers x 1-worker
throughput)), the ideal throughput (workers x slots / (2 requests x delay)), the driver's CPU
time per sample (this process, Ray's threads included; target < 5 ms) and its wall-clock
overhead per sample against the ideal. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from localeval.judge.interface import JudgeReply, JudgeRequest  # noqa: E402


class DelayJudge:
    """Sleeps `delay` s per request; the answer is a function of the request."""

    name = "delay"
    fingerprint = "delay-v1"

    def __init__(self, delay: float) -> None:
        self.delay = delay

    def sampling_key(self) -> str:
        return "delay"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        await asyncio.sleep(self.delay)
        digest = hashlib.sha256(json.dumps(request.messages).encode()).digest()
        if request.step == "faithfulness_statements":
            answer: dict[str, Any] = {"statements": [f"claim {digest[0]:02x}", "claim two"]}
        else:
            n = json.loads(request.answer_schema)["properties"]["verdicts"]["minItems"]
            answer = {"verdicts": [{"reason": "r", "verdict": digest[i] % 2} for i in range(n)]}
        text = json.dumps(answer)
        return JudgeReply(text=text, finish_reason="stop", prompt_tokens=100,
                          prompt_tokens_processed=100, completion_tokens=len(text) // 4)

    def close(self) -> None:
        pass


def rows(n: int) -> list[dict[str, Any]]:
    return [{"id": f"s{i}", "question": f"What is item {i}?",
             "answer": f"Item {i} is a thing numbered {i * 7}.",
             "contexts": [f"Item {i} is described here with number {i * 7}."]} for i in range(n)]


def one(data: list[dict[str, Any]], out: Path, delay: float, parallel: int,
        ray: Any) -> dict[str, Any]:
    from localeval.config import Settings
    from localeval.distributed.executor import ray_executor
    from localeval.models.embed import HashEmbedder
    from localeval.runner import run

    settings = Settings(metrics=["faithfulness"], language="en", no_cache=True, parallel=parallel)
    marks = {"cpu": time.process_time(), "wall": time.perf_counter()}
    begun = dict(marks)

    def log(message: str) -> None:  # clocks restart when the workers are ready
        if message.startswith("ray:") and "ready" in message:
            marks.update(cpu=time.process_time(), wall=time.perf_counter())

    judge, embedder = DelayJudge(delay), HashEmbedder()
    executor = None if ray is None else ray_executor(ray, judge=judge, embedder=embedder)
    outcome = run(data, out, settings, judge=judge, embedder=embedder, overwrite=True,
                  executor=executor, log=log)
    wall, cpu = time.perf_counter() - marks["wall"], time.process_time() - marks["cpu"]
    assert len(outcome.records) == len(data) and not any(r.errors for r in outcome.records)
    return {"wall_s": round(wall, 3), "driver_cpu_s": round(cpu, 3),
            "start_s": round(marks["wall"] - begun["wall"], 3),
            "requests": outcome.summary["judge"]["calls"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--delay", type=float, default=0.05, help="seconds per judge request")
    parser.add_argument("--parallel", type=int, default=4, help="samples in flight per worker")
    parser.add_argument("--workers", default="1,2,4")
    args = parser.parse_args()
    import ray

    from localeval.distributed import RayOptions
    from localeval.distributed.executor import init_local

    counts = [int(w) for w in args.workers.split(",")]
    data = rows(args.samples)
    per_sample = 2  # faithfulness: statements, then verdicts
    result: dict[str, Any] = {
        "samples": args.samples, "delay_s": args.delay, "parallel": args.parallel,
        "requests_per_sample": per_sample, "settings": {},
    }
    with tempfile.TemporaryDirectory() as tmp:
        local = one(data, Path(tmp) / "local", args.delay, args.parallel, None)
        result["local"] = {**local, "samples_per_s": round(args.samples / local["wall_s"], 1)}
        started = time.perf_counter()
        init_local(max(counts))
        result["ray_start_s"] = round(time.perf_counter() - started, 2)
        base = None
        for n in counts:
            options = RayOptions(workers=n, cpus_per_worker=1)
            m = one(data, Path(tmp) / f"ray{n}", args.delay, args.parallel, options)
            rate = args.samples / m["wall_s"]
            ideal = n * args.parallel / (per_sample * args.delay)
            base = base or rate / n
            result["settings"][str(n)] = {
                **m,
                "samples_per_s": round(rate, 1),
                "ideal_samples_per_s": round(ideal, 1),
                "scaling_efficiency": round(rate / (n * base), 3),
                "driver_cpu_ms_per_sample": round(1000 * m["driver_cpu_s"] / args.samples, 2),
                "wall_overhead_ms_per_sample": round(
                    1000 * (m["wall_s"] - args.samples / ideal) / args.samples, 2),
            }
        ray.shutdown()
    worst = max(s["driver_cpu_ms_per_sample"] for s in result["settings"].values())
    result["driver_cpu_ms_per_sample_max"] = worst
    result["target_ms"] = 5.0
    result["meets_target"] = worst < 5.0
    print(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
