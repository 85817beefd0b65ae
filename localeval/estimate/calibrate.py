"""This machine's judge speed, measured once with the real engine and kept on disk.

Two short workloads go through the engine (`judge/llamacpp.open_engine`, the run's settings):
prompts of several lengths, one of them long enough for full chunks deep into the window, with
planned answers (prompt reading); then as many generating requests as the engine decodes in one
call (the answer_relevance template: free strings). Every `llama_decode` call is timed; least
squares give the seconds of a chunk by its size (and, for full chunks, its position) and of a
generation call by its sequences; the engine's time outside decode calls is charged per request
and per generated token. The result is cached in `speed.json` beside the answer cache, keyed by
the model's sha256, threads, prompt chunk, GPU layers and this host (CPU model, cores,
llama.cpp binding), so a later estimate loads nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import hashlib
import json
import math
import os
import platform
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localeval.estimate.simulate import SMALL, Speed

CALIBRATION_PARALLEL = 4
"""Sequences generated together while calibrating: the engine's widest generation call."""
VERSION = 2


def host_fingerprint() -> str:
    """CPU model, usable cores, machine and the llama.cpp binding's version."""
    cpu = platform.processor()
    try:
        for line in Path("/proc/cpuinfo").read_text(encoding="utf-8").splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        from importlib.metadata import version

        llama = version("llama_cpp_python")
    except Exception:  # not installed: the key says so
        llama = "none"
    return f"{platform.node()}|{platform.machine()}|{cpu}|{cores} cores|llama-cpp-python {llama}"


def calibration_key(sha256: str, threads: int, n_batch: int, n_gpu_layers: int) -> str:
    raw = f"v{VERSION}|{sha256}|threads={threads}|n_batch={n_batch}|gpu={n_gpu_layers}|" \
          f"{host_fingerprint()}"
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()[:24]


def speed_file(cache_dir: Path) -> Path:
    return cache_dir / "speed.json"


def load(path: Path, key: str,
         warn: Callable[[str], None] | None = None) -> dict[str, Any] | None:
    """The cached calibration for `key`, or None (a damaged or wrong-shaped entry is passed
    to `warn` and measured again)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, NotADirectoryError):  # nothing cached there yet
        return None
    except (OSError, ValueError, RecursionError) as exc:
        if warn:
            warn(f"warning: the calibration cache {path} cannot be read ({type(exc).__name__}); "
                 "measuring again")
        return None
    entry = data.get(key) if isinstance(data, dict) else None
    if entry is None:
        return None
    why = _invalid(entry)
    if why:
        if warn:
            warn(f"warning: the calibration cache {path} holds a bad entry ({why}); "
                 "measuring again")
        return None
    return dict(entry)


def _invalid(entry: Any) -> str | None:
    """Why a cached entry cannot be used, or None: every speed a finite number >= 0, the
    required ones present, free_tokens finite and > 0."""
    if not isinstance(entry, dict) or not isinstance(entry.get("speed"), dict):
        return "no speed"
    speed = entry["speed"]
    fields = {f.name for f in dataclasses.fields(Speed)}
    required = {"chunk_s", "token_s", "step_s", "gen_token_s"}
    if not required <= set(speed) or not set(speed) <= fields:
        return "its speed fields are not the expected ones"
    for name, value in speed.items():
        if value is None and name == "small_s":
            continue
        if not _finite(value) or value < 0:
            return f"speed {name} = {str(value)[:20]}"
    if not _finite(entry.get("free_tokens")) or entry["free_tokens"] <= 0:
        return f"free_tokens = {str(entry.get('free_tokens'))[:20]}"
    return None


def _finite(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def store(path: Path, key: str, entry: dict[str, Any]) -> None:
    """Add `entry` under `key`: written to a fresh file renamed over speed.json, so a link
    planted beside it is never written through."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data = data if isinstance(data, dict) else {}
    except (OSError, ValueError, RecursionError):
        data = {}
    data[key] = entry
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".speed.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(json.dumps(data, indent=2))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def speed_of(entry: dict[str, Any]) -> Speed:
    return Speed(**entry["speed"])


def _fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares intercept and slope (slope only, through the mean, when x never varies)."""
    n = len(points)
    mx = sum(x for x, _ in points) / n
    my = sum(y for _, y in points) / n
    var = sum((x - mx) ** 2 for x, _ in points)
    if var == 0:
        return 0.0, my / mx if mx else 0.0
    slope = sum((x - mx) * (y - my) for x, y in points) / var
    intercept = my - slope * mx
    if intercept < 0:  # a line through 0 instead: no negative fixed cost
        return 0.0, sum(x * y for x, y in points) / sum(x * x for x, _ in points)
    return intercept, slope


def _fit_chunks(calls: list[tuple[int, int, float, int]]) -> tuple[float, float, float]:
    """Seconds of a full chunk: intercept, per token, per token per 1,000 positions (least
    squares; without the position term, or through 0, where a coefficient would be negative)."""
    import numpy as np

    rows = [(n, s, start) for k, n, s, start in calls if k == 1 and n >= SMALL]
    if len(rows) >= 3:
        x = np.array([[1.0, n, n * (start + n / 2) / 1000] for n, _, start in rows])
        coef = np.linalg.lstsq(x, np.array([s for _, s, _ in rows]), rcond=None)[0]
        if (coef >= 0).all():
            return float(coef[0]), float(coef[1]), float(coef[2])
    intercept, slope = _fit([(n, s) for n, s, _ in rows] or [(1, 0.0)])
    return intercept, slope, 0.0


def _paragraphs(seed: int, words: int, per_paragraph: int = 6) -> str:
    """Distinct English prose of about `words` words, in paragraphs of `per_paragraph`
    sentences."""
    nouns = ["river", "station", "council", "harbour", "library", "bridge", "orchard", "museum"]
    out, para = [], []
    for i in range(words // 12):
        n = nouns[(seed + i) % len(nouns)]
        para.append(f"In {1800 + seed * 7 + i} the {n} of district {seed}-{i} recorded "
                    f"{(seed + 3) * (i + 11)} visitors and a new wing.")
        if len(para) == per_paragraph:
            out.append(" ".join(para))
            para = []
    out.append(" ".join(para))
    return "\n\n".join(p for p in out if p)


def measure(model_path: Path, sha256: str, *, n_ctx: int, threads: int | None,
            n_gpu_layers: int, n_batch: int) -> dict[str, Any]:
    """Load the judge, run both workloads, return the cache entry (the speed and what it
    was measured on)."""
    from localeval import prompts
    from localeval.judge.interface import JudgeRequest
    from localeval.judge.llamacpp import open_engine
    from localeval.judge.schemas import checked_verdicts, question_list, schema_json

    started = time.perf_counter()
    engine = open_engine(model_path, sha256, parallel=CALIBRATION_PARALLEL, n_ctx=n_ctx,
                         n_threads=threads, n_gpu_layers=n_gpu_layers, max_chunk=n_batch)
    load_s = time.perf_counter() - started
    calls: list[tuple[int, int, float, int]] = []  # (chunks, tokens, seconds, position)
    decode = engine.backend.decode

    def timed(chunks: Any) -> Any:
        t = time.perf_counter()
        out = decode(chunks)
        calls.append((len(chunks), sum(len(c.tokens) for c in chunks), time.perf_counter() - t,
                      max(c.start for c in chunks)))
        return out

    engine.backend.decode = timed  # type: ignore[method-assign]

    async def run(requests: list[JudgeRequest]) -> tuple[float, list[Any]]:
        t = time.perf_counter()
        replies = await asyncio.gather(*(engine.complete(r) for r in requests))
        return time.perf_counter() - t, replies

    verdicts = schema_json(checked_verdicts(2))
    reading = [JudgeRequest(step="calibrate_prompt", max_tokens=64, answer_schema=verdicts,
                            messages=[{"role": "user",
                                       "content": _paragraphs(seed, words, per)}])
               for seed, words, per in ((1, 150, 6), (2, 300, 6), (3, 450, 6), (4, 900, 999))]
    answers = ["The bridge opened in 1932 and carried trains until 1978.",
               "Photosynthesis turns light, water and carbon dioxide into sugar and oxygen.",
               "The museum is closed on Mondays; tickets cost 12 euros for adults.",
               "Most river dolphins live in fresh water and are nearly blind."]
    questions = schema_json(question_list(3, True))
    generating = [JudgeRequest(step="calibrate_generation", max_tokens=768,
                               answer_schema=questions,
                               messages=prompts.render("en", "answer_relevance_questions",
                                                       explain=True, answer=a, n=3))
                  for a in answers[:CALIBRATION_PARALLEL]]
    try:
        wall_read, _ = asyncio.run(run(reading))
        read_calls = list(calls)
        calls.clear()
        wall_gen, replies = asyncio.run(run(generating))
        gen_calls = list(calls)
    finally:
        engine.close()
    chunk_s, token_s, pos_s = _fit_chunks(read_calls + gen_calls)
    small_s, small_token_s = _fit([(n, s) for k, n, s, _ in read_calls + gen_calls
                                   if k == 1 and 1 < n < SMALL] or [(1, 0.0)])
    steps = [(k, s) for k, n, s, _ in gen_calls if n == k]
    step_s, gen_token_s = _fit(steps or [(1, 0.0)])
    if os.environ.get("LOCALEVAL_CALIBRATION_DUMP"):
        Path(os.environ["LOCALEVAL_CALIBRATION_DUMP"]).write_text(json.dumps(
            {"read": read_calls, "gen": gen_calls, "wall_read": wall_read, "wall_gen": wall_gen}))
    request_s = max(0.0, wall_read - sum(c[2] for c in read_calls)) / len(reading)
    generated = sum(r.completion_tokens for r in replies)
    rest = wall_gen - sum(c[2] for c in gen_calls) - request_s * len(replies)
    gen_token_s += max(0.0, rest) / max(1, generated)
    free_strings = 2 * 3 * len(replies)  # question and reason, 3 items each
    return {
        "speed": {"chunk_s": chunk_s, "token_s": token_s, "pos_s": pos_s, "small_s": small_s,
                  "small_token_s": small_token_s, "step_s": step_s,
                  "gen_token_s": gen_token_s, "request_s": request_s},
        "load_s": round(load_s, 3),
        "free_tokens": round(generated / free_strings, 2),
        "prompt_tokens_per_s": round(1 / token_s, 1) if token_s else None,
        "generated_tokens_per_s_at_4": round(4 / (step_s + 4 * gen_token_s), 1),
        "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "measured_s": round(time.perf_counter() - started, 1),
        "host": host_fingerprint(),
        "threads": threads,
        "n_batch": n_batch,
    }
