"""localeval against ragas 0.4.3 on the same samples, the same GGUF judge and the same embedder.

ragas runs in its own throwaway venv (--ragas-python), against `python -m llama_cpp.server` on
127.0.0.1 serving the same GGUF (n_ctx 4096, one worker, temperature 0), with its Faithfulness
and ResponseRelevancy (strictness 3; `bypass_n=True` because the server ignores n>1).
localeval runs faithfulness + answer_relevance in-process with its default engine settings.
Prints one JSON object: wall time of each, the ratio, NaN / parse failures, scores side by side.

Setting up the ragas venv (once):
    python3.11 -m venv /tmp/ragas-venv
    /tmp/ragas-venv/bin/pip install torch==2.13.0 'ragas==0.4.3' 'langchain-community<0.4' \\
        langchain-openai sentence-transformers 'llama-cpp-python[server]==0.3.36'
Run (expensive: ragas needs about 100 s per sample on 2 cores):
    flock /tmp/localeval-cpu.lock .venv/bin/python scripts/bench_vs_ragas.py --samples 10
"""

from __future__ import annotations

import argparse
import json
import math
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEV = ROOT.parent / "shared" / "data" / "dev"  # ../shared/data/dev beside the repository

RAGAS_SCRIPT = r'''
import json, math, sys, time, warnings
warnings.filterwarnings("ignore")
rows, base_url, embedder, out = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3], sys.argv[4]
from langchain_openai import ChatOpenAI
from langchain_community.embeddings import HuggingFaceEmbeddings
from ragas import EvaluationDataset, SingleTurnSample, evaluate
from ragas.embeddings import LangchainEmbeddingsWrapper
from ragas.llms import LangchainLLMWrapper
from ragas.metrics import Faithfulness, ResponseRelevancy
from ragas.run_config import RunConfig

llm = LangchainLLMWrapper(ChatOpenAI(base_url=base_url, api_key="local", model="judge",
                                     temperature=0, max_tokens=1024, timeout=900), bypass_n=True)
emb = LangchainEmbeddingsWrapper(HuggingFaceEmbeddings(model_name=embedder))
data = EvaluationDataset(samples=[SingleTurnSample(user_input=r["question"], response=r["answer"],
                                                   retrieved_contexts=r["contexts"]) for r in rows])
started = time.perf_counter()
result = evaluate(data, metrics=[Faithfulness(), ResponseRelevancy(strictness=3)], llm=llm,
                  embeddings=emb, run_config=RunConfig(max_workers=1, timeout=900, max_retries=1),
                  raise_exceptions=False, show_progress=False)
wall = time.perf_counter() - started
df = result.to_pandas()
scores = [{"faithfulness": None if math.isnan(f) else float(f),
           "answer_relevancy": None if math.isnan(a) else float(a)}
          for f, a in zip(df["faithfulness"], df["answer_relevancy"])]
json.dump({"wall_s": wall, "scores": scores}, open(out, "w"))
'''


def load_rows(n: int, data_dir: Path) -> list[dict[str, Any]]:
    """English HaluEval QA rows; right and hallucinated answers alternate."""
    rows = []
    for i, line in enumerate((data_dir / "halueval_qa_dev.jsonl").open(encoding="utf-8")):
        if i >= n:
            break
        r = json.loads(line)
        rows.append({"id": r["id"], "question": r["question"],
                     "answer": r["right_answer"] if i % 2 == 0 else r["hallucinated_answer"],
                     "contexts": [r["knowledge"]]})
    return rows


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_localeval(rows: list[dict[str, Any]], model: Path, embedder: Path,
                  metrics: list[str], parallel: int | None) -> dict[str, Any]:
    from localeval.config import Settings
    from localeval.runner import run

    settings = Settings(metrics=metrics, judge_model=model, embedder=embedder, no_cache=True,
                        parallel=parallel, language="en")
    started = time.perf_counter()
    outcome = run(rows, None, settings)
    wall = time.perf_counter() - started
    scores = [{m: r.scores.get(m) for m in metrics} for r in outcome.records]
    errors = [r.errors for r in outcome.records if r.errors]
    return {"wall_s": round(wall, 1), "scores": scores, "errors": errors,
            "judge": outcome.summary["judge"],
            "parallel": outcome.summary["models"]["judge"].get("parallel")}


def run_ragas(rows: list[dict[str, Any]], model: Path, embedder: Path, python: Path,
              threads: int) -> dict[str, Any]:
    port = free_port()
    server = subprocess.Popen(
        [str(python), "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
         "--port", str(port), "--n_ctx", "4096", "--n_threads", str(threads),
         "--n_threads_batch", str(threads)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
                break
            except OSError:
                if time.monotonic() > deadline or server.poll() is not None:
                    raise RuntimeError("llama_cpp.server did not start") from None
                time.sleep(0.5)
        with tempfile.TemporaryDirectory() as tmp:
            rows_file, out_file = Path(tmp, "rows.json"), Path(tmp, "out.json")
            script = Path(tmp, "r.py")
            rows_file.write_text(json.dumps(rows), encoding="utf-8")
            script.write_text(RAGAS_SCRIPT, encoding="utf-8")
            env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                   "RAGAS_DO_NOT_TRACK": "true", "OPENAI_API_KEY": "local"}
            started = time.perf_counter()
            done = subprocess.run([str(python), str(script), str(rows_file),
                                   f"http://127.0.0.1:{port}/v1", str(embedder), str(out_file)],
                                  capture_output=True, text=True, env=env)
            total = time.perf_counter() - started
            if done.returncode != 0:
                raise RuntimeError(f"ragas failed: {done.stderr[-2000:]}")
            result = json.loads(out_file.read_text(encoding="utf-8"))
        result["wall_with_imports_s"] = round(total, 1)
        result["wall_s"] = round(result["wall_s"], 1)
        return result
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--model", type=Path,
                        default=ROOT / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    parser.add_argument("--embedder", type=Path, default=ROOT / "models" / "all-minilm-l6-v2")
    parser.add_argument("--ragas-python", type=Path, default=Path("/tmp/ragas-venv/bin/python"))
    parser.add_argument("--data", type=Path, default=DEV)
    parser.add_argument("--parallel", type=int, help="localeval --parallel (default: hardware)")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--skip-ragas", action="store_true", help="localeval only (for a dry run)")
    args = parser.parse_args(argv)
    rows = load_rows(args.samples, args.data)
    from localeval.metrics import REGISTRY

    metrics = ["faithfulness"] + (["answer_relevance"] if "answer_relevance" in REGISTRY else [])
    ours = run_localeval(rows, args.model, args.embedder, metrics, args.parallel)
    report: dict[str, Any] = {
        "samples": len(rows), "data": "HaluEval QA dev (English), right/hallucinated alternating",
        "model": args.model.name, "embedder": args.embedder.name,
        "localeval": {"metrics": metrics, "wall_s": ours["wall_s"], "parallel": ours["parallel"],
                      "judge_calls": ours["judge"]["calls"],
                      "parse_failures": ours["judge"]["failures"],
                      "sample_errors": ours["errors"]},
    }
    if not args.skip_ragas:
        theirs = run_ragas(rows, args.model, args.embedder, args.ragas_python, args.threads)
        nan = {k: sum(s[k] is None for s in theirs["scores"])
               for k in ("faithfulness", "answer_relevancy")}
        report["ragas"] = {"metrics": ["Faithfulness", "ResponseRelevancy(strictness=3, bypass_n)"],
                           "wall_s": theirs["wall_s"],
                           "wall_with_imports_s": theirs["wall_with_imports_s"],
                           "nan_scores": nan}
        report["speedup"] = round(theirs["wall_s"] / ours["wall_s"], 2)
        report["scores"] = [
            {"id": r["id"], "answer_kind": "right" if i % 2 == 0 else "hallucinated",
             "localeval": _round(o), "ragas": _round(t)}
            for i, (r, o, t) in enumerate(zip(rows, ours["scores"], theirs["scores"], strict=True))]
    else:
        report["scores"] = [{"id": r["id"], "localeval": _round(o)}
                            for r, o in zip(rows, ours["scores"], strict=True)]
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


def _round(scores: dict[str, float | None]) -> dict[str, float | None]:
    return {k: None if v is None or (isinstance(v, float) and math.isnan(v)) else round(v, 3)
            for k, v in scores.items()}


if __name__ == "__main__":
    sys.exit(main())
