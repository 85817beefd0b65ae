"""localeval against ragas 0.4.3 on the same samples, the same GGUF judge and the same embedder.

Two sets, each scored by both tools:
- `halueval`: English HaluEval QA dev rows (knowledge as the one context; right and hallucinated
  answers alternate);
- `long`: Chinese UHGEval dev news, >= --long-min-tokens (1,500) tokens of contexts per sample,
  counted with the judge's own tokenizer. The article (newsBeginning + newsRemainder) is the
  context, the headline the question, the real or the hallucinated continuation (alternating) the
  answer. Articles that reach the minimum alone are used alone (longest first). No dev article does
  (the longest has 654 tokens), so when too few do, a sample's contexts are its own article
  followed by whole other dev articles (a retriever's distractors, never cut, never repeated)
  until the minimum is reached; the JSON says which construction was used.

localeval runs faithfulness + answer_relevance in-process with its default settings (default
--parallel, n_ctx, chunk, profile; --no-cache), the whole set in one run. Its judge is the one
the runner would build, wrapped in a pass-through that records every request's sample, tokens
and times (the engine and its batching are untouched): per-sample prompt tokens processed,
tokens generated and judge calls are exact; per-sample seconds are the run's time shared out
among the samples that had work in flight at each instant (`seconds`), next to each sample's
first-request-to-last-answer span (`span_s`, overlapping).

ragas runs in its own venv (--ragas-python) against `python -m llama_cpp.server` on 127.0.0.1
serving the same GGUF (n_ctx --ragas-n-ctx, one worker, temperature 0), with Faithfulness and
ResponseRelevancy (strictness 3; `bypass_n=True` because the server ignores n>1), one sample
per evaluate() call so that each sample's seconds are its own. The server is started through a
small launcher that counts, per request, the prompt tokens llama.cpp actually evaluated (the
server reuses the previous prompt's KV prefix) and appends them with the usage to a log; a
LangChain callback counts the calls and the usage the client received. Parse failures: ragas's
"failed to parse output" errors, its output-repair calls, and NaN scores.

Utilisation: localeval's (prompt tokens processed + tokens generated) per second of judge time
(wall less the model load), against llama.cpp's raw batched decode throughput at the same
number of sequences (`raw_ceiling` of scripts/bench_engine.py, measured in the same process).

Setting up the ragas venv (once):
    python3.11 -m venv /tmp/ragas-venv
    /tmp/ragas-venv/bin/pip install torch==2.13.0 'ragas==0.4.3' 'langchain-community<0.4' \\
        langchain-openai sentence-transformers 'llama-cpp-python[server]==0.3.36'
Run (expensive: ragas needs minutes per sample on 2 cores):
    flock /tmp/localeval-cpu.lock .venv/bin/python scripts/bench_vs_ragas.py --samples 10
Smoke test: --samples 1 (per set); --sets halueval or --sets long for one set; --skip-ragas.
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import itertools
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
DEV = ROOT.parent / "shared" / "data" / "dev"
METRICS = ["faithfulness", "answer_relevance"]
SETS = ("halueval", "long_en", "long")

# Run by the ragas python: llama_cpp.server, plus a per-request record of what llama.cpp evaluated.
SERVER_LAUNCHER = r'''
import json, runpy, sys, time
from llama_cpp import llama as _llama
log = sys.argv.pop(1)
Llama = _llama.Llama
_eval, _sample, _chat = Llama.eval, Llama.sample, Llama.create_chat_completion
state = {"prompt": 0, "sampled": False}

def _eval_counted(self, tokens):
    if not state["sampled"]:  # tokens evaluated before the first sample = prompt processing
        state["prompt"] += len(tokens)
    return _eval(self, tokens)

def _sample_counted(self, *args, **kwargs):
    state["sampled"] = True
    return _sample(self, *args, **kwargs)

def _chat_counted(self, *args, **kwargs):
    state["prompt"], state["sampled"] = 0, False
    started, entry = time.perf_counter(), {}
    try:
        out = _chat(self, *args, **kwargs)
        usage = out.get("usage") or {} if isinstance(out, dict) else {}
        entry = {"prompt_tokens": usage.get("prompt_tokens"),
                 "completion_tokens": usage.get("completion_tokens")}
        return out
    except Exception as exc:
        entry = {"error": f"{type(exc).__name__}: {exc}"[:300]}
        raise
    finally:
        entry.update(prompt_tokens_processed=state["prompt"],
                     seconds=round(time.perf_counter() - started, 3))
        with open(log, "a", encoding="utf-8") as f:
            f.write(json.dumps(entry) + "\n")

Llama.eval, Llama.sample = _eval_counted, _sample_counted
Llama.create_chat_completion = _chat_counted
sys.argv[0] = "llama_cpp.server"
runpy.run_module("llama_cpp.server", run_name="__main__", alter_sys=True)
'''

# Run by the ragas python: one evaluate() per sample.
RAGAS_SCRIPT = r'''
import json, logging, math, sys, time, warnings
import httpx
warnings.filterwarnings("ignore")
rows, base_url, embedder, out, server_log = (json.load(open(sys.argv[1])), sys.argv[2],
                                             sys.argv[3], sys.argv[4], sys.argv[5])
from langchain_core.callbacks import BaseCallbackHandler
from langchain_openai import ChatOpenAI
from langchain_community.embeddings import HuggingFaceEmbeddings
from ragas import EvaluationDataset, SingleTurnSample, evaluate
from ragas.embeddings import LangchainEmbeddingsWrapper
from ragas.llms import LangchainLLMWrapper
from ragas.metrics import Faithfulness, ResponseRelevancy
from ragas.run_config import RunConfig

REPAIR = "The output string did not satisfy the constraints"

class Calls(BaseCallbackHandler):
    """Every chat call the client makes: usage as the server reported it, output repairs."""
    def __init__(self):
        self.calls = {}
    def on_chat_model_start(self, serialized, messages, *, run_id, **kwargs):
        text = " ".join(str(m.content) for batch in messages for m in batch)
        self.calls[run_id] = {"repair": REPAIR in text, "prompt_tokens": 0,
                              "completion_tokens": 0, "error": None}
    def on_llm_end(self, response, *, run_id, **kwargs):
        call = self.calls.setdefault(run_id, {"repair": False, "error": None})
        usage = (response.llm_output or {}).get("token_usage") or {}
        if not usage:
            try:
                meta = response.generations[0][0].message.usage_metadata or {}
                usage = {"prompt_tokens": meta.get("input_tokens", 0),
                         "completion_tokens": meta.get("output_tokens", 0)}
            except (AttributeError, IndexError):
                usage = {}
        call["prompt_tokens"] = int(usage.get("prompt_tokens") or 0)
        call["completion_tokens"] = int(usage.get("completion_tokens") or 0)
    def on_llm_error(self, error, *, run_id, **kwargs):
        self.calls.setdefault(run_id, {"repair": False})["error"] = str(error)[:300]

class Errors(logging.Handler):
    def __init__(self):
        super().__init__(logging.WARNING)
        self.parse, self.jobs, self.messages = 0, 0, []
    def emit(self, record):
        msg = record.getMessage()
        if "failed to parse output" in msg:
            self.parse += 1
        if "Exception raised in Job" in msg:
            self.jobs += 1
        if record.levelno >= logging.ERROR:
            self.messages.append(msg[:300])

calls, errors = Calls(), Errors()
logging.getLogger("ragas").addHandler(errors)
emb = LangchainEmbeddingsWrapper(HuggingFaceEmbeddings(model_name=embedder))
log_at = 0
results = []
for r in rows:
    # a new HTTP client per evaluate(): each evaluate() runs its own event loop, and the async
    # client langchain-openai caches for a base URL stays bound to the first loop, so every
    # later sample failed with "Connection error" (langchain-openai 1.7, openai 3.3, httpx 0.28)
    llm = LangchainLLMWrapper(ChatOpenAI(base_url=base_url, api_key="local", model="judge",
                                         temperature=0, max_tokens=1024, timeout=1800,
                                         http_async_client=httpx.AsyncClient(timeout=1800),
                                         callbacks=[calls]), bypass_n=True)
    metrics = [Faithfulness(), ResponseRelevancy(strictness=3)]
    calls.calls, errors.parse, errors.jobs, errors.messages = {}, 0, 0, []
    data = EvaluationDataset(samples=[SingleTurnSample(
        user_input=r["question"], response=r["answer"], retrieved_contexts=r["contexts"])])
    started = time.perf_counter()
    result = evaluate(data, metrics=metrics, llm=llm, embeddings=emb,
                      run_config=RunConfig(max_workers=1, timeout=1800, max_retries=1),
                      raise_exceptions=False, show_progress=False)
    seconds = time.perf_counter() - started
    df = result.to_pandas()
    with open(server_log, encoding="utf-8") as f:
        f.seek(log_at)
        served = [json.loads(line) for line in f.read().splitlines() if line.strip()]
        log_at = f.tell()
    f_, a_ = (float(df[c][0]) if c in df else math.nan
              for c in ("faithfulness", "answer_relevancy"))
    results.append({
        "id": r["id"], "seconds": seconds,
        "scores": {"faithfulness": None if math.isnan(f_) else f_,
                   "answer_relevancy": None if math.isnan(a_) else a_},
        "client_calls": list(calls.calls.values()), "server_calls": served,
        "parse_failures": errors.parse, "job_errors": errors.jobs,
        "error_messages": errors.messages})
json.dump(results, open(out, "w"))
'''


# ---- samples ---------------------------------------------------------------------------------


def load_halueval(n: int, data_dir: Path) -> list[dict[str, Any]]:
    """English HaluEval QA rows; right and hallucinated answers alternate."""
    rows = []
    for i, line in enumerate((data_dir / "halueval_qa_dev.jsonl").open(encoding="utf-8")):
        if i >= n:
            break
        r = json.loads(line)
        rows.append({"id": r["id"], "question": r["question"],
                     "answer": r["right_answer"] if i % 2 == 0 else r["hallucinated_answer"],
                     "answer_kind": "right" if i % 2 == 0 else "hallucinated",
                     "contexts": [r["knowledge"]]})
    return rows


def load_long(n: int, data_dir: Path, count: Any, min_tokens: int) -> tuple[list[dict], str]:
    """n UHGEval samples with >= min_tokens tokens of contexts (count: text -> tokens).

    Articles long enough on their own are used alone, longest first. Otherwise each of the n
    longest articles is a sample whose contexts are its article followed by whole articles from
    the rest of the set (in file order, each used once) until min_tokens is reached.
    """
    items = [json.loads(line) for line in (data_dir / "uhgeval_dev.jsonl").open(encoding="utf-8")]
    for it in items:
        it["_article"] = (it["newsBeginning"] + it["newsRemainder"]).strip()
        it["_tokens"] = count(it["_article"])
    ranked = sorted(range(len(items)), key=lambda i: (-items[i]["_tokens"], i))
    chosen = ranked[:n]
    alone = all(items[i]["_tokens"] >= min_tokens for i in chosen)
    pool = [i for i in range(len(items)) if i not in set(chosen)]
    rows = []
    for k, i in enumerate(sorted(chosen)):  # file order
        it = items[i]
        contexts, tokens = [it["_article"]], [it["_tokens"]]
        while not alone and sum(tokens) < min_tokens:
            if not pool:
                raise SystemExit(f"not enough UHGEval articles for {n} samples of "
                                 f">= {min_tokens} tokens")
            extra = items[pool.pop(0)]
            contexts.append(extra["_article"])
            tokens.append(extra["_tokens"])
        answer = it["realContinuation"] if k % 2 == 0 else it["hallucinatedContinuation"]
        rows.append({"id": it["id"], "question": it["headLine"], "answer": answer.strip(),
                     "answer_kind": "real" if k % 2 == 0 else "hallucinated",
                     "contexts": contexts, "context_tokens": tokens})
    longest = items[ranked[0]]["_tokens"]
    how = ("each sample's own article alone" if alone else
           f"no dev article reaches {min_tokens} tokens alone (longest {longest}): each sample "
           "is one of the longest articles, followed by whole other dev articles as extra "
           f"contexts (distractors) until >= {min_tokens} tokens")
    return rows, how


def load_long_en(n: int, data_dir: Path, count: Any, min_tokens: int,
                 min_words: int = 100) -> tuple[list[dict], str]:
    """n English long samples from the HaluEval summarization dev set.

    Sample k's contexts are document k, then the next documents (whole, in file order, wrapping
    round) until the contexts reach min_tokens; its answer is document k's right summary (even k)
    or hallucinated summary (odd k), followed by the right summaries of the added documents, in
    order, while the answer is under min_words words — an abstractive summary of the material,
    with one part that may be hallucinated. The question asks for that summary.
    """
    items = [json.loads(line) for line in
             (data_dir / "halueval_summarization_dev.jsonl").open(encoding="utf-8")]
    if n > len(items):
        raise SystemExit(f"only {len(items)} summarization dev rows for {n} samples")
    rows = []
    for k in range(n):
        first = items[k]
        contexts, tokens = [first["document"]], [count(first["document"])]
        answer = first["right_summary" if k % 2 == 0 else "hallucinated_summary"].strip()
        nxt = k + 1
        while sum(tokens) < min_tokens or len(answer.split()) < min_words:
            extra = items[nxt % len(items)]
            nxt += 1
            if extra is first:
                raise SystemExit("the summarization dev set is too short for these samples")
            contexts.append(extra["document"])
            tokens.append(count(extra["document"]))
            if len(answer.split()) < min_words:
                answer += " " + extra["right_summary"].strip()
        rows.append({"id": first["id"], "question": "Summarise these news articles.",
                     "answer": answer, "answer_kind": "right" if k % 2 == 0 else "hallucinated",
                     "contexts": contexts, "context_tokens": tokens,
                     "answer_words": len(answer.split())})
    how = (f"HaluEval summarization dev (English): a document, then the next whole documents "
           f"until >= {min_tokens} context tokens; the answer is its right (even) or "
           f"hallucinated (odd) summary, then the next documents' right summaries until >= "
           f"{min_words} words")
    return rows, how


# ---- localeval -------------------------------------------------------------------------------


class Accounting:
    """Pass-through judge: forwards everything to the runner's own judge and records, for each
    request, its sample, step, tokens and when it was sent and answered."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.requests: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def complete(self, request: Any) -> Any:
        sent = time.perf_counter()
        entry: dict[str, Any] = {"sample": request.sample_id, "step": request.step, "sent": sent}
        self.requests.append(entry)
        try:
            reply = await self.inner.complete(request)
        except Exception as exc:
            entry.update(done=time.perf_counter(), error=f"{type(exc).__name__}: {exc}")
            raise
        entry.update(done=time.perf_counter(), prompt_tokens=reply.prompt_tokens,
                     prompt_tokens_processed=reply.prompt_tokens_processed,
                     completion_tokens=reply.completion_tokens,
                     forced_tokens=reply.forced_tokens, finish=reply.finish_reason)
        return reply


def decisions(record: Any) -> dict[str, Any]:
    """What a sample's answer must carry at least: one verdict per judged claim of
    faithfulness, and answer_relevance's generated questions with their flags."""
    claims = (record.details.get("faithfulness") or {}).get("statements") or []
    judged = sum(1 for c in claims if "judge_verdict" in c)  # the others: no request
    questions = (record.details.get("answer_relevance") or {}).get("generated_questions") or []
    return {"verdicts": judged, "questions": [q["question"] for q in questions]}


def add_floor(entry: dict[str, Any], row: dict[str, Any], count: Any,
              made: dict[str, Any]) -> None:
    """The floor of a sample: its own tokens (contexts, question, answer) read once, plus the
    tokens that carry a decision (a verdict token per judged claim; answer_relevance's
    questions and one flag each), and each tool's tokens processed + generated against it."""
    own = sum(count(c) for c in row["contexts"]) + count(row["question"]) + count(row["answer"])
    decided = made["verdicts"] + sum(count(q) + 1 for q in made["questions"])
    entry["floor_tokens"] = {"own": own, "decisions": decided, "total": own + decided}
    for tool in ("localeval", "ragas"):
        t = entry.get(tool)
        if t is not None:
            work = (t["prompt_tokens_processed"] + t["generated_tokens"]
                    + t.get("forced_tokens", 0))
            t["work_tokens"] = work
            t["work_over_floor"] = round(work / max(1, own + decided), 3)


def time_shares(spans: dict[str, tuple[float, float]]) -> dict[str, float]:
    """Share every instant equally among the samples whose span covers it."""
    points = sorted({t for span in spans.values() for t in span})
    share = dict.fromkeys(spans, 0.0)
    for a, b in itertools.pairwise(points):
        active = [k for k, (s, e) in spans.items() if s <= a and e >= b]
        for k in active:
            share[k] += (b - a) / len(active)
    return share


def run_localeval(rows: list[dict[str, Any]], model: Path, embedder: Any,
                  parallel: int | None, threads: int | None) -> dict[str, Any]:
    from localeval import models
    from localeval.config import Settings
    from localeval.models.backends import _make_judge
    from localeval.runner import run

    settings = Settings(metrics=METRICS, judge_model=model, no_cache=True, parallel=parallel,
                        n_threads=threads)
    manifest = models.load_manifest()
    inner, info = _make_judge(settings, manifest, manifest.profile(settings.profile))
    judge = Accounting(inner)
    inputs = [{k: r[k] for k in ("id", "question", "answer", "contexts")} for r in rows]
    started = time.perf_counter()
    outcome = run(inputs, None, settings, judge=judge, embedder=embedder)
    wall = time.perf_counter() - started
    load_s = inner.load_seconds or 0.0
    reqs = judge.requests
    load_end = min((r["sent"] for r in reqs), default=started) + load_s
    spans = {}
    for r in rows:
        mine = [q for q in reqs if q["sample"] == str(r["id"])]
        if mine:
            spans[str(r["id"])] = (max(load_end, min(q["sent"] for q in mine)),
                                   max(load_end, max(q["done"] for q in mine)))
    shares = time_shares(spans)
    by_id = {rec.id: rec for rec in outcome.records}
    per_sample = []
    for r in rows:
        sid = str(r["id"])
        mine = [q for q in reqs if q["sample"] == sid]
        rec = by_id[sid]
        span = spans.get(sid, (0.0, 0.0))
        per_sample.append({
            "seconds": round(shares.get(sid, 0.0), 2),
            "span_s": round(span[1] - span[0], 2),
            "prompt_tokens": sum(q.get("prompt_tokens", 0) for q in mine),
            "prompt_tokens_processed": sum(q.get("prompt_tokens_processed", 0) for q in mine),
            "generated_tokens": sum(q.get("completion_tokens", 0) for q in mine),
            "forced_tokens": sum(q.get("forced_tokens", 0) for q in mine),
            "judge_calls": len(mine),
            "calls_by_step": _count(q["step"] for q in mine),
            "scores": _round({m: rec.scores.get(m) for m in METRICS}),
            "errors": rec.errors or None,
            "_decisions": decisions(rec),
        })
    j = outcome.summary["judge"]
    return {
        "wall_s": round(wall, 2),
        "judge_load_s": round(load_s, 2),
        "parallel": info.get("parallel"),
        "n_ctx": info.get("n_ctx"),
        "prompt_chunk": info.get("prompt_chunk"),
        "judge_calls": j["calls"],
        "prompt_tokens": j["prompt_tokens"],
        "prompt_tokens_processed": j["prompt_tokens_processed"],
        "generated_tokens": j["completion_tokens"],
        "forced_tokens": j.get("forced_tokens", 0),
        "parse_failures": j["failures"],
        "none_scores": {m: sum(p["scores"][m] is None for p in per_sample) for m in METRICS},
        "samples_with_errors": sum(bool(p["errors"]) for p in per_sample),
        "_per_sample": per_sample,
    }


# ---- ragas -----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run_ragas(rows: list[dict[str, Any]], model: Path, embedder: Path, python: Path,
              threads: int, n_ctx: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        launcher, script = Path(tmp, "server.py"), Path(tmp, "r.py")
        server_log, rows_file, out_file = (Path(tmp, "served.jsonl"), Path(tmp, "rows.json"),
                                           Path(tmp, "out.json"))
        launcher.write_text(SERVER_LAUNCHER, encoding="utf-8")
        script.write_text(RAGAS_SCRIPT, encoding="utf-8")
        server_log.write_text("", encoding="utf-8")
        rows_file.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
        port = free_port()
        server = subprocess.Popen(
            [str(python), str(launcher), str(server_log), "--model", str(model),
             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(n_ctx),
             "--n_threads", str(threads), "--n_threads_batch", str(threads)],
            stdout=subprocess.DEVNULL, stderr=open(Path(tmp, "server.err"), "w"))  # noqa: SIM115
        try:
            deadline = time.monotonic() + 180
            while True:
                try:
                    urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/models", timeout=2)
                    break
                except OSError:
                    if time.monotonic() > deadline or server.poll() is not None:
                        err = Path(tmp, "server.err").read_text("utf-8", "replace")[-2000:]
                        raise RuntimeError(f"llama_cpp.server did not start: {err}") from None
                    time.sleep(0.5)
            env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
                   "RAGAS_DO_NOT_TRACK": "true", "OPENAI_API_KEY": "local"}
            started = time.perf_counter()
            done = subprocess.run([str(python), str(script), str(rows_file),
                                   f"http://127.0.0.1:{port}/v1", str(embedder), str(out_file),
                                   str(server_log)], capture_output=True, text=True, env=env)
            total = time.perf_counter() - started
            if done.returncode != 0:
                raise RuntimeError(f"ragas failed: {done.stderr[-3000:]}")
            results = json.loads(out_file.read_text(encoding="utf-8"))
        finally:
            server.terminate()
            try:
                server.wait(timeout=30)
            except subprocess.TimeoutExpired:
                server.kill()
    per_sample = []
    for res in results:
        client, served = res["client_calls"], res["server_calls"]
        per_sample.append({
            "seconds": round(res["seconds"], 2),
            "prompt_tokens": sum(c.get("prompt_tokens") or 0 for c in served),
            "prompt_tokens_processed": sum(c["prompt_tokens_processed"] for c in served),
            "generated_tokens": sum(c.get("completion_tokens") or 0 for c in served),
            "judge_calls": len(client),
            "server_requests": len(served),
            "repair_calls": sum(bool(c.get("repair")) for c in client),
            "failed_calls": sum(bool(c.get("error")) for c in client),
            "parse_failures": res["parse_failures"],
            "scores": _round(res["scores"]),
            "errors": res["error_messages"] or None,
        })
    wall = sum(res["seconds"] for res in results)
    return {
        "wall_s": round(wall, 2),
        "wall_with_imports_s": round(total, 2),
        "server_n_ctx": n_ctx,
        "judge_calls": sum(p["judge_calls"] for p in per_sample),
        "prompt_tokens": sum(p["prompt_tokens"] for p in per_sample),
        "prompt_tokens_processed": sum(p["prompt_tokens_processed"] for p in per_sample),
        "generated_tokens": sum(p["generated_tokens"] for p in per_sample),
        "parse_failures": sum(p["parse_failures"] for p in per_sample),
        "repair_calls": sum(p["repair_calls"] for p in per_sample),
        "failed_calls": sum(p["failed_calls"] for p in per_sample),
        "nan_scores": {k: sum(p["scores"][k] is None for p in per_sample)
                       for k in ("faithfulness", "answer_relevancy")},
        "client_calls_match_server_requests": all(
            p["judge_calls"] == p["server_requests"] for p in per_sample),
        "_per_sample": per_sample,
    }


# ---- report ----------------------------------------------------------------------------------


def utilisation(ours: dict[str, Any], ceiling: dict[str, float]) -> dict[str, Any]:
    judge_s = max(1e-9, ours["wall_s"] - ours["judge_load_s"])
    tokens = ours["prompt_tokens_processed"] + ours["generated_tokens"]
    raw = ceiling.get(str(ours["parallel"]))
    tok_s, gen_s = tokens / judge_s, ours["generated_tokens"] / judge_s
    return {
        "judge_s": round(judge_s, 2),
        "tok_s": round(tok_s, 2),
        "generated_tok_s": round(gen_s, 2),
        "raw_decode_tok_s": raw,
        "utilisation": round(tok_s / raw, 3) if raw else None,
        "generated_utilisation": round(gen_s / raw, 3) if raw else None,
    }


def bench_set(name: str, rows: list[dict[str, Any]], how: str, args: Any,
              embedder: Any, count: Any) -> dict[str, Any]:
    print(f"[{name}] localeval, {len(rows)} samples", file=sys.stderr, flush=True)
    ours = run_localeval(rows, args.model, embedder, args.parallel, args.threads)
    out: dict[str, Any] = {"samples": len(rows), "construction": how,
                           "localeval": {k: v for k, v in ours.items() if k[0] != "_"}}
    theirs = None
    if not args.skip_ragas:
        print(f"[{name}] ragas, {len(rows)} samples", file=sys.stderr, flush=True)
        theirs = run_ragas(rows, args.model, args.embedder, args.ragas_python,
                           args.threads or _threads(), args.ragas_n_ctx)
        out["ragas"] = {k: v for k, v in theirs.items() if k[0] != "_"}
        out["ratio"] = round(theirs["wall_s"] / ours["wall_s"], 2)
        out["ratio_excluding_localeval_model_load"] = round(
            theirs["wall_s"] / max(1e-9, ours["wall_s"] - ours["judge_load_s"]), 2)
    out["per_sample"] = []
    for i, r in enumerate(rows):
        entry: dict[str, Any] = {"id": r["id"], "answer_kind": r["answer_kind"],
                                 "contexts": len(r["contexts"]),
                                 "context_tokens": sum(r.get("context_tokens") or [0]) or None,
                                 "localeval": ours["_per_sample"][i]}
        if theirs is not None:
            entry["ragas"] = theirs["_per_sample"][i]
        add_floor(entry, r, count, entry["localeval"].pop("_decisions"))
        out["per_sample"].append(entry)
    for tool in ("localeval", "ragas"):
        works = [p[tool]["work_over_floor"] for p in out["per_sample"] if tool in p]
        if works:
            out[tool]["work_over_floor"] = {"mean": round(sum(works) / len(works), 3),
                                            "max": max(works)}
    out["_ours"] = ours
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=10, help="samples per set")
    parser.add_argument("--sets", default="halueval,long_en",
                        help=f"comma-separated, of {', '.join(SETS)}")
    parser.add_argument("--long-min-tokens", type=int, default=1500,
                        help="tokens of contexts per long sample (judge's tokenizer)")
    parser.add_argument("--model", type=Path,
                        default=ROOT / "models" / "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    parser.add_argument("--embedder", type=Path, default=ROOT / "models" / "m3e-small")
    parser.add_argument("--ragas-python", type=Path, default=Path("/tmp/ragas-venv/bin/python"))
    parser.add_argument("--ragas-n-ctx", type=int, default=4096, help="llama_cpp.server n_ctx")
    parser.add_argument("--data", type=Path, default=DEV)
    parser.add_argument("--parallel", type=int, help="localeval --parallel (default: hardware)")
    parser.add_argument("--threads", type=int,
                        help="threads for both judges (default: localeval's, every core)")
    parser.add_argument("--no-ceiling", action="store_true", help="skip the raw decode ceiling")
    parser.add_argument("--skip-ragas", action="store_true", help="localeval only (a dry run)")
    args = parser.parse_args(argv)
    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    if not sets or set(sets) - set(SETS):
        parser.error(f"--sets: a comma-separated list of {', '.join(SETS)}")
    if not args.model.is_file():
        parser.error(f"model {args.model} not found")

    from localeval.config import Settings
    from localeval.judge.llama import Tokenizer, load_model

    vocab = load_model(args.model, 0, vocab_only=True)
    tokenizer = Tokenizer(vocab)

    def count(text: str) -> int:
        return len(tokenizer.tokens(text))

    inputs: dict[str, tuple[list[dict[str, Any]], str]] = {}
    if "halueval" in sets:
        rows = load_halueval(args.samples, args.data)
        for r in rows:
            r["context_tokens"] = [len(tokenizer.tokens(c)) for c in r["contexts"]]
        inputs["halueval"] = rows, "HaluEval QA dev (English): knowledge as the one context"
    if "long" in sets:
        rows, how = load_long(args.samples, args.data, lambda t: len(tokenizer.tokens(t)),
                              args.long_min_tokens)
        inputs["long"] = rows, f"UHGEval dev (Chinese), headline as the question; {how}"
    if "long_en" in sets:
        inputs["long_en"] = load_long_en(args.samples, args.data,
                                         lambda t: len(tokenizer.tokens(t)), args.long_min_tokens)

    # the embedder is loaded once, before any timing (ragas also loads its own beforehand)
    from localeval import models
    from localeval.models.backends import _make_embedder

    settings = Settings(metrics=METRICS, embedder=args.embedder)
    manifest = models.load_manifest()
    embedder, _ = _make_embedder(settings, manifest, manifest.profile(settings.profile))

    report: dict[str, Any] = {
        "model": args.model.name, "embedder": args.embedder.name,
        "threads": args.threads or _threads(),
        "localeval_settings": f"defaults: metrics {METRICS}, --no-cache"
                              + (f", --parallel {args.parallel}" if args.parallel else ""),
        "ragas_settings": "Faithfulness + ResponseRelevancy(strictness=3, bypass_n), "
                          "llama_cpp.server, temperature 0, max_tokens 1024, one evaluate() "
                          "per sample, max_workers 1",
        "notes": {
            "wall_s": "localeval: the run() call, including the judge model's load "
                      "(judge_load_s) and the embedder's use, not its load; ragas: the sum of "
                      "its evaluate() calls, server already up, embedder already loaded",
            "ratio": "ragas wall_s / localeval wall_s",
            "localeval_per_sample_seconds": "the run's time after the model load, each instant "
                                            "shared equally among the samples with a judge "
                                            "request in flight (measured, not an even split); "
                                            "span_s = first request sent to last answer, "
                                            "overlapping across samples",
            "prompt_tokens_processed": "prompt tokens llama.cpp evaluated (not served from a "
                                       "kept KV prefix); localeval from its replies, ragas "
                                       "counted inside the server",
            "utilisation": "localeval (prompt processed + generated) tok/s over judge_s (wall "
                           "less model load) / llama.cpp raw batched decode tok/s at the same "
                           "number of sequences; prompt tokens are read 64 at a time, so it "
                           "can exceed 1",
        },
        "sets": {},
    }
    for name, (rows, how) in inputs.items():
        report["sets"][name] = bench_set(name, rows, how, args, embedder, count)
    if not args.no_ceiling:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from bench_engine import raw_ceiling

        seqs = sorted({1} | {s["_ours"]["parallel"] for s in report["sets"].values()})
        print(f"raw decode ceiling at {seqs}", file=sys.stderr, flush=True)
        ceiling = raw_ceiling(args.model, seqs, args.threads)
        report["raw_decode_tok_s"] = ceiling
        for s in report["sets"].values():
            s["utilisation"] = utilisation(s["_ours"], ceiling)
    for s in report["sets"].values():
        del s["_ours"]
    vocab.close()
    print(json.dumps(report, indent=2, ensure_ascii=False))
    return 0


def _threads() -> int:
    from localeval.judge.llama import default_threads

    return default_threads()


def _count(items: Any) -> dict[str, int]:
    out: dict[str, int] = {}
    for item in items:
        out[item] = out.get(item, 0) + 1
    return out


def _round(scores: dict[str, float | None]) -> dict[str, float | None]:
    return {k: None if v is None or (isinstance(v, float) and math.isnan(v)) else round(v, 3)
            for k, v in scores.items()}


if __name__ == "__main__":
    sys.exit(main())
