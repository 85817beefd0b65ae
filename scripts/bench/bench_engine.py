"""Benchmark the judge engine: the same run (faithfulness, or --metrics) at several `parallel`
settings.

Samples come from the dev sets (HaluEval QA in English, UHGEval in Chinese; right and
hallucinated answers alternate), contexts cut to --context-chars to keep the run short. Each
setting runs the real runner (`localeval.runner.run`, no cache) and reports wall time,
generated and prompt tokens per second, prompt tokens saved by prefix reuse, and how many
samples got the same score as the first setting. `--repeat P` runs setting P a second time and
checks that both runs gave identical records; `alone` scores every sample in a run of its own and
`rev` scores the set in reverse order (batch invariance: both must equal every other setting).
`--ceiling` adds llama.cpp's raw batched decode throughput (tokens/s for N sequences, no
sampling) as the upper bound.

    flock /tmp/localeval-cpu.lock .venv/bin/python scripts/bench/bench_engine.py --samples 16

Settings: `N` = the engine with N slots (`--parallel N`), `alone` = each sample alone with one
slot, `revN` = N slots, samples in reverse order. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
DEFAULT_MODEL = ROOT / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
METRICS = ["faithfulness"]  # --metrics
N_GPU_LAYERS = [-1]  # --n-gpu-layers: every model this script loads (engine, ceiling, sweep)


def load_rows(n: int, data_dir: Path, context_chars: int) -> list[dict[str, Any]]:
    """n rows: half English (HaluEval QA), half Chinese (UHGEval); answers alternate."""
    sys.path.insert(0, str(ROOT))
    from scripts.provenance.convert import dev_rows

    en, zh = dev_rows("halueval", data_dir), dev_rows("uhgeval", data_dir)
    rows: list[dict[str, Any]] = []
    for i in range(n):
        if i % 2 == 0:
            r = en[i // 2]
            answer = r["right_answer"] if (i // 2) % 2 == 0 else r["hallucinated_answer"]
            rows.append({"id": r["id"], "question": r["question"], "answer": answer,
                         "contexts": [r["knowledge"][:context_chars]]})
        else:
            r = zh[i // 2]
            answer = r["realContinuation"] if (i // 2) % 2 == 0 else r["hallucinatedContinuation"]
            article = (r["newsBeginning"] + r["newsRemainder"]).strip()
            rows.append({"id": r["id"], "question": r["headLine"], "answer": answer.strip(),
                         "contexts": [article[:context_chars]]})
    return rows


def make_judge(parallel: int, model: Path, n_ctx: int, threads: int | None, chunk: int) -> Any:
    from localeval.judge.llamacpp import open_engine

    return open_engine(model, "bench", parallel=parallel, n_ctx=n_ctx, n_threads=threads,
                       max_chunk=chunk, n_gpu_layers=N_GPU_LAYERS[0])


def run_setting(setting: str, rows: list[dict[str, Any]], model: Path, n_ctx: int,
                threads: int | None, max_tokens: int, chunk: int) -> dict[str, Any]:
    started = time.perf_counter()
    if setting == "alone":
        runs = [_run_rows([row], 1, model, n_ctx, threads, max_tokens, chunk) for row in rows]
        records = [rec for r in runs for rec in r[0]]
        judge = {k: sum(r[1][k] for r in runs) for k, v in runs[0][1].items()
                 if isinstance(v, int | float) and not isinstance(v, bool)}
    else:
        parallel = int(setting.removeprefix("rev"))
        order = rows[::-1] if setting.startswith("rev") else rows
        records, judge = _run_rows(order, parallel, model, n_ctx, threads, max_tokens, chunk)
        if setting.startswith("rev"):
            records = records[::-1]
    wall = time.perf_counter() - started
    j = judge
    digest = hashlib.sha256(json.dumps(records, sort_keys=True).encode()).hexdigest()[:12]
    print(f"setting {setting}: {wall:.1f} s, {j['calls']} calls, records {digest}",
          file=sys.stderr, flush=True)
    return {
        "setting": setting,
        "wall_s": round(wall, 2),
        "judge_calls": j["calls"],
        "generated_tokens": j["completion_tokens"],
        "prompt_tokens": j["prompt_tokens"],
        "prompt_tokens_processed": j["prompt_tokens_processed"],
        "prefix_tokens_saved": j["prompt_tokens"] - j["prompt_tokens_processed"],
        "generated_tok_s": round(j["completion_tokens"] / wall, 2),
        "prompt_tok_s": round(j["prompt_tokens_processed"] / wall, 2),
        "failures": j["failures"],
        "_records": records,
    }


def _run_rows(rows: list[dict[str, Any]], parallel: int, model: Path, n_ctx: int,
              threads: int | None, max_tokens: int, chunk: int) -> tuple[list[dict], dict]:
    from localeval.config import Settings
    from localeval.runner import run

    judge = make_judge(parallel, model, n_ctx, threads, chunk)
    settings = Settings(metrics=METRICS, no_cache=True, n_ctx=n_ctx,
                        max_tokens=max_tokens, parallel=parallel, n_batch=chunk,
                        n_gpu_layers=N_GPU_LAYERS[0])
    outcome = run(rows, None, settings, judge=judge)
    records = [r.model_dump(include={"id", "scores", "details", "errors"})
               for r in outcome.records]
    return records, outcome.summary["judge"]


def kill_and_resume(rows: list[dict[str, Any]], parallel: int, model: Path, args: Any,
                    work: Path) -> dict[str, Any]:
    """`localeval run` SIGKILLed once half the samples are written, then `--resume`d; then a
    rerun into a new folder with the same answer cache (must make 0 judge calls, load no model).
    """
    import os
    import signal
    import subprocess

    data = work / "rows.jsonl"
    data.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), "utf-8")
    base = [sys.executable, "-m", "localeval", "run", str(data), "--metrics", ",".join(METRICS),
            "--judge-model", str(model), "--parallel", str(parallel), "--n-ctx",
            str(args.n_ctx), "--max-tokens", str(args.max_tokens), "--n-batch", str(args.chunk),
            "--cache", str(work / "cache.sqlite"), "--quiet"]
    if args.threads:
        base += ["--threads", str(args.threads)]
    out = work / "killed"
    proc = subprocess.Popen([*base, "--out", str(out)], cwd=ROOT)
    results = out / "results.jsonl"
    while proc.poll() is None:
        done = results.read_text("utf-8").count("\n") if results.is_file() else 0
        if done >= len(rows) // 2:
            os.kill(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.2)
    proc.wait()
    killed_at = results.read_text("utf-8").count("\n") if results.is_file() else 0
    started = time.perf_counter()
    subprocess.run([*base, "--out", str(out), "--resume"], cwd=ROOT, check=True)
    resumed_s = time.perf_counter() - started
    started = time.perf_counter()
    subprocess.run([*base, "--out", str(work / "rerun")], cwd=ROOT, check=True)
    rerun_s = time.perf_counter() - started

    def records(folder: Path) -> list[dict[str, Any]]:
        lines = (folder / "results.jsonl").read_text("utf-8").splitlines()
        by_id = {r["id"]: r for r in map(json.loads, lines)}
        return [{k: by_id[str(row["id"])].get(k) for k in ("id", "scores", "details", "errors")}
                for row in rows]

    rerun = json.loads((work / "rerun" / "summary.json").read_text("utf-8"))
    return {"killed_after": killed_at, "resume_s": round(resumed_s, 1),
            "_records": records(out), "_rerun_records": records(work / "rerun"),
            "rerun_s": round(rerun_s, 1), "rerun_judge_calls": rerun["judge"]["calls"],
            "rerun_model_load_seconds": rerun["models"]["judge"].get("load_seconds")}


def raw_ceiling(model: Path, n_seqs: list[int], threads: int | None,
                steps: int = 16) -> dict[str, float]:
    """llama.cpp batched decode alone: N sequences, one token each per llama_decode, no sampling."""
    import llama_cpp

    from localeval.judge.llamacpp import LlamaBackend

    out: dict[str, float] = {}
    for n in n_seqs:
        judge = LlamaBackend(model, n_ctx=512, n_seq=n, n_batch=max(64, n), n_threads=threads,
                             n_gpu_layers=N_GPU_LAYERS[0])
        ctx, batch, mem = judge._ctx.ctx, judge._batch, judge._mem
        prompt = judge.tokenizer.prompt_tokens(
            [{"role": "user", "content": "Count from one to fifty."}])

        def fill(tokens_by_seq: dict[int, list[int]], start: dict[int, int],
                 batch: Any = batch) -> None:
            k = 0
            for seq, toks in tokens_by_seq.items():
                for i, t in enumerate(toks):
                    batch.token[k], batch.pos[k] = t, start[seq] + i
                    batch.n_seq_id[k], batch.seq_id[k][0], batch.logits[k] = 1, seq, 0
                    k += 1
                batch.logits[k - 1] = 1
            batch.n_tokens = k

        for seq in range(n):  # read the prompt once per sequence (not timed)
            llama_cpp.llama_memory_seq_rm(mem, seq, -1, -1)
            fill({seq: prompt}, {seq: 0})
            llama_cpp.llama_decode(ctx, batch)
        pos = {seq: len(prompt) for seq in range(n)}
        t0 = time.perf_counter()
        for _ in range(steps):
            fill({seq: [prompt[-1]] for seq in range(n)}, pos)
            if llama_cpp.llama_decode(ctx, batch) != 0:
                raise RuntimeError("llama_decode failed")
            pos = {seq: p + 1 for seq, p in pos.items()}
        out[str(n)] = round(n * steps / (time.perf_counter() - t0), 2)
        judge.close()
    return out


def prompt_rate(model: Path, chunks: list[int], threads: int | None,
                n_tokens: int = 512) -> dict[str, float]:
    """Prompt tokens/s when one sequence's prompt is read in chunks of each size."""
    from localeval.judge.llamacpp import DecodeChunk, LlamaBackend

    out: dict[str, float] = {}
    for size in chunks:
        backend = LlamaBackend(model, n_ctx=n_tokens + 8, n_seq=1, n_batch=size,
                               n_threads=threads, n_gpu_layers=N_GPU_LAYERS[0])
        prompt = (backend.tokenizer.tokens("The quick brown fox jumps over the lazy dog. ") * 64)
        prompt = prompt[:n_tokens]
        best = float("inf")
        for _ in range(2):
            backend.seq_keep(0, 0)
            t0 = time.perf_counter()
            for start in range(0, n_tokens, size):
                piece = prompt[start:start + size]
                backend.decode([DecodeChunk(0, start, piece, [len(piece) - 1])])
            best = min(best, time.perf_counter() - t0)
        out[str(size)] = round(n_tokens / best, 1)
        backend.close()
    return out


def agreement(base: list[dict[str, Any]], other: list[dict[str, Any]]) -> dict[str, Any]:
    same = sum(a.get("scores") == b.get("scores") and a.get("errors") == b.get("errors")
               for a, b in zip(base, other, strict=True))
    return {"same_score": same, "samples": len(base), "rate": round(same / len(base), 3)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL)
    parser.add_argument("--data", type=Path,
                        help="the dev files' folder (default ../shared/data/dev)")
    parser.add_argument("--samples", type=int, default=16)
    parser.add_argument("--metrics", default="faithfulness",
                        help="comma-separated (answer_relevance adds generated free text)")
    parser.add_argument("--context-chars", type=int, default=500)
    parser.add_argument("--settings", default="1,2,4,8,alone,rev4",
                        help="comma-separated: N (engine slots), alone, revN")
    parser.add_argument("--chunk", type=int, default=512,
                        help="longest prompt chunk (--n-batch)")
    parser.add_argument("--repeat", default="", help="setting to run twice (empty: none)")
    parser.add_argument("--chunk-sweep", default="",
                        help="also measure prompt tok/s at these chunk sizes, e.g. 16,32,64,512")
    parser.add_argument("--kill", type=int, default=0,
                        help="also SIGKILL a CLI run at this --parallel halfway and resume it")
    parser.add_argument("--ceiling", default="1,2,4,8", help="raw decode throughput for these N")
    parser.add_argument("--n-ctx", type=int, default=4096)
    parser.add_argument("--max-tokens", type=int, default=512)
    parser.add_argument("--threads", type=int)
    parser.add_argument("--n-gpu-layers", type=int, default=-1,
                        help="layers on the GPU for every model loaded (-1: all, with a GPU "
                             "build; the ceiling and the chunk sweep too)")
    args = parser.parse_args(argv)
    METRICS[:] = [m.strip() for m in args.metrics.split(",") if m.strip()]
    N_GPU_LAYERS[0] = args.n_gpu_layers
    if not args.model.is_file():
        print(f"model {args.model} not found", file=sys.stderr)
        return 2
    if args.samples < 1 and not (args.samples == 0 and args.chunk_sweep):
        print("--samples must be 1 or more (0 only with --chunk-sweep: the sweep alone)",
              file=sys.stderr)
        return 2
    if args.chunk_sweep:
        sweep = prompt_rate(args.model, [int(c) for c in args.chunk_sweep.split(",")],
                            args.threads)
        if args.samples == 0:
            print(json.dumps({"prompt_tok_s_by_chunk": sweep}, indent=2))
            return 0
    rows = load_rows(args.samples, args.data, args.context_chars)
    settings = [s.strip() for s in args.settings.split(",") if s.strip()]
    results = [run_setting(s, rows, args.model, args.n_ctx, args.threads, args.max_tokens,
                           args.chunk) for s in settings]
    base = results[0]
    report: dict[str, Any] = {
        "model": args.model.name, "samples": len(rows), "context_chars": args.context_chars,
        "chunk": args.chunk,
        "identical_records_to_first": {r["setting"]: r["_records"] == base["_records"]
                                       for r in results[1:]},
        "languages": {"en": (len(rows) + 1) // 2, "zh": len(rows) // 2},
        "runs": [{k: v for k, v in r.items() if not k.startswith("_")} for r in results],
        "speedup_vs_first": {r["setting"]: round(base["wall_s"] / r["wall_s"], 2) for r in results},
        "agreement_vs_first": {r["setting"]: agreement(base["_records"], r["_records"])
                               for r in results[1:]},
        "mean_faithfulness": {
            r["setting"]: _mean([x["scores"].get("faithfulness") for x in r["_records"]])
            for r in results},
    }
    if args.chunk_sweep:
        report["prompt_tok_s_by_chunk"] = sweep
    if args.kill:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            killed = kill_and_resume(rows, args.kill, args.model, args, Path(tmp))
        report["kill_and_resume"] = {
            **{k: v for k, v in killed.items() if not k.startswith("_")},
            "parallel": args.kill,
            "identical_records_to_first": killed["_records"] == base["_records"],
            "rerun_identical": killed["_rerun_records"] == base["_records"],
        }
    if args.repeat:
        again = run_setting(args.repeat, rows, args.model, args.n_ctx, args.threads,
                            args.max_tokens, args.chunk)
        first = next((r for r in results if r["setting"] == args.repeat), None)
        if first is not None:
            report["repeat"] = {
                "setting": args.repeat, "wall_s": again["wall_s"],
                "identical_records": first["_records"] == again["_records"],
                "agreement": agreement(first["_records"], again["_records"]),
            }
    if args.ceiling:
        report["raw_decode_tok_s"] = raw_ceiling(
            args.model, [int(n) for n in args.ceiling.split(",")], args.threads)
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


def _mean(values: list[float | None]) -> float | None:
    vals = [v for v in values if v is not None]
    return round(sum(vals) / len(vals), 4) if vals else None


if __name__ == "__main__":
    sys.exit(main())
