"""localeval against ragas on the same HaluEval dev rows, the same GGUF judge and embedder.

localeval scores `--metrics` (faithfulness and answer_relevance by default) in-process with its
default settings and no cache; ragas scores Faithfulness and/or ResponseRelevancy
(scripts/bench/ragas_side.py, run by a separate ragas venv) against `llama_cpp.server` serving
the same GGUF on 127.0.0.1 (one worker, temperature 0). `--set qa` takes short rows (HaluEval QA:
a question, one knowledge sentence or two), `--set summaries` long ones (HaluEval summarization:
a news document, "summarize" as the question, a summary as the answer). Right and hallucinated
answers alternate, so each tool's faithfulness should rank the right answers above the
hallucinated ones. Prints one JSON object: per tool the wall seconds (localeval's include its
model load; ragas' are the sum of its evaluate() calls, the server already up), judge calls,
prompt tokens, parse failures and undefined scores, the mean faithfulness of right and of
hallucinated answers, the ratio of the wall seconds, and per row both tools' scores.

Install ragas once, in its own venv (it pins its own LangChain; llama-cpp-python[server]
builds llama.cpp from source, ~6 minutes):
    python3.11 -m venv /tmp/ragas-venv
    /tmp/ragas-venv/bin/pip install 'ragas==0.4.3' 'langchain-community<0.4' langchain-openai \
        sentence-transformers 'llama-cpp-python[server]==0.3.36'
Run (ragas needs minutes per row on 2 cores):
    flock /tmp/localeval-cpu.lock .venv/bin/python scripts/bench/bench_vs_ragas.py --samples 8 \
        --metrics faithfulness
    flock /tmp/localeval-cpu.lock .venv/bin/python scripts/bench/bench_vs_ragas.py --set summaries \
        --samples 4 --metrics faithfulness
`--skip-ragas` runs the localeval side only.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
METRICS = ("faithfulness", "answer_relevance")
SUMMARY_QUESTION = "Summarize the document."
SETS = {"qa": "halueval", "summaries": "halueval_summarization"}
"""--set → the dev file (scripts/provenance/convert.FILES) its rows come from."""


def load_rows(kind_of_set: str, n: int, data: Path | None) -> list[dict[str, Any]]:
    """The first n rows of the set; right and hallucinated answers alternate."""
    sys.path.insert(0, str(ROOT))
    from scripts.provenance.convert import dev_rows

    rows = []
    for i, r in enumerate(dev_rows(SETS[kind_of_set], data)[:n]):
        kind = "right" if i % 2 == 0 else "hallucinated"
        if kind_of_set == "qa":
            row = {"question": r["question"], "contexts": [r["knowledge"]],
                   "answer": r[f"{kind}_answer"]}
        else:
            row = {"question": SUMMARY_QUESTION, "contexts": [r["document"]],
                   "answer": r[f"{kind}_summary"]}
        rows.append({"id": str(r["id"]), **row, "answer_kind": kind})
    return rows


def run_localeval(rows: list[dict[str, Any]], metrics: list[str], model: Path,
                  embedder: Path) -> dict[str, Any]:
    import localeval

    started = time.perf_counter()
    results = localeval.evaluate([{k: r[k] for k in ("id", "question", "answer", "contexts")}
                                  for r in rows], metrics, judge_model=model,
                                 embedder=str(embedder), no_cache=True)
    judge = results.summary["judge"]
    return {"wall_s": round(time.perf_counter() - started, 2), "judge_calls": judge["calls"],
            "prompt_tokens": judge["prompt_tokens"],
            "prompt_tokens_read": judge["prompt_tokens_processed"],
            "generated_tokens": judge["completion_tokens"], "decode_s": judge["decode_s"],
            "tokens_by_step": judge["tokens_by_step"], "calls_by_step": judge["calls_by_step"],
            "parse_failures": judge["failures"], "errors": len(results.errors),
            "scores": {r.id: {m: r.scores.get(m) for m in metrics} for r in results.records}}


def run_ragas(rows: list[dict[str, Any]], metrics: list[str], model: Path, embedder: Path,
              python: Path, n_ctx: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        rows_file, out_file, err_file = (Path(tmp, n) for n in ("rows.json", "out.json", "err"))
        rows_file.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        with err_file.open("w") as err:
            server = subprocess.Popen(
                [str(python), str(Path(__file__).with_name("ragas_server.py")), "--model",
                 str(model), "--host",
                 "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx)],
                stdout=subprocess.DEVNULL, stderr=err)
        try:
            wait_for(f"http://127.0.0.1:{port}/v1/models", server, err_file)
            env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                   "RAGAS_DO_NOT_TRACK": "true", "OPENAI_API_KEY": "local"}
            done = subprocess.run([str(python), str(Path(__file__).with_name("ragas_side.py")),
                                   str(rows_file), f"http://127.0.0.1:{port}/v1", str(embedder),
                                   str(out_file), ",".join(metrics)],
                                  capture_output=True, text=True, env=env)
            if done.returncode != 0:
                sys.exit(f"ragas failed: {done.stderr[-3000:]}")
            if server.poll() is not None:
                sys.exit(f"llama_cpp.server stopped (exit status {server.returncode}) while ragas "
                         f"ran: {err_file.read_text(encoding='utf-8')[-2000:]}")
            per_row = json.loads(out_file.read_text(encoding="utf-8"))
        finally:
            server.terminate()
            server.wait(timeout=30)
    return {"wall_s": round(sum(r["seconds"] for r in per_row), 2),
            **{k: sum(r[k] for r in per_row) for k in ("judge_calls", "repair_calls",
                                                       "failed_calls", "parse_failures",
                                                       "prompt_tokens")},
            "scores": {r["id"]: r["scores"] for r in per_row}}


def wait_for(url: str, server: subprocess.Popen, err_file: Path) -> None:
    deadline = time.monotonic() + 180
    while True:
        try:
            urllib.request.urlopen(url, timeout=2)
            return
        except OSError:
            if time.monotonic() > deadline or server.poll() is not None:
                err = err_file.read_text("utf-8", "replace")[-2000:]
                sys.exit(f"llama_cpp.server did not start: {err}")
            time.sleep(0.5)


def summary(tool: dict[str, Any], rows: list[dict[str, Any]], faith: str) -> dict[str, Any]:
    """The tool's totals, its undefined scores and its mean faithfulness per answer kind."""
    out = {k: v for k, v in tool.items() if k != "scores"}
    out["wall_s_per_sample"] = round(tool["wall_s"] / max(len(rows), 1), 2)
    scores = tool["scores"]
    out["undefined_scores"] = sum(v is None for s in scores.values() for v in s.values())
    for kind in ("right", "hallucinated"):
        got = [scores[r["id"]][faith] for r in rows if r["answer_kind"] == kind
               and scores.get(r["id"], {}).get(faith) is not None]
        out[f"faithfulness_{kind}"] = round(sum(got) / len(got), 4) if got else None
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", choices=SETS, default="qa", dest="kind_of_set",
                        help="qa: short HaluEval QA rows; summaries: long HaluEval documents")
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--metrics", default=",".join(METRICS),
                        help="comma-separated, of: " + ", ".join(METRICS))
    parser.add_argument("--model", type=Path,
                        default=ROOT / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    parser.add_argument("--embedder", type=Path, default=ROOT / "models" / "m3e-small")
    parser.add_argument("--ragas-python", type=Path, default=Path("/tmp/ragas-venv/bin/python"))
    parser.add_argument("--ragas-n-ctx", type=int, default=4096, help="llama_cpp.server n_ctx")
    parser.add_argument("--data", type=Path, help="the dev files' folder (../shared/data/dev)")
    parser.add_argument("--skip-ragas", action="store_true", help="the localeval side only")
    args = parser.parse_args()
    if not args.model.is_file():
        parser.error(f"model {args.model} not found (--model)")
    if not args.skip_ragas and not args.ragas_python.is_file():
        parser.error(f"no ragas venv at {args.ragas_python}: install it (see --help's source) "
                     "or pass --ragas-python / --skip-ragas")
    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()]
    if unknown := [m for m in metrics if m not in METRICS]:
        parser.error(f"--metrics: unknown {', '.join(unknown)}; known: {', '.join(METRICS)}")
    rows = load_rows(args.kind_of_set, args.samples, args.data)
    ours = run_localeval(rows, metrics, args.model, args.embedder)
    out: dict[str, Any] = {"set": args.kind_of_set, "samples": len(rows), "metrics": metrics,
                           "localeval": summary(ours, rows, "faithfulness")}
    theirs = None
    if not args.skip_ragas:
        theirs = run_ragas(rows, metrics, args.model, args.embedder, args.ragas_python,
                           args.ragas_n_ctx)
        out["ragas"] = summary(theirs, rows, "faithfulness")
        out["wall_ratio_ragas_over_localeval"] = round(theirs["wall_s"] / ours["wall_s"], 2)
    out["per_row"] = [{"id": r["id"], "answer_kind": r["answer_kind"],
                       "localeval": ours["scores"][r["id"]],
                       "ragas": theirs["scores"].get(r["id"]) if theirs else None}
                      for r in rows]
    print(json.dumps(out, indent=1, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
