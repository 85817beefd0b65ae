"""The batched llama.cpp judge: continuous batching over one context, a grammar per sequence,
and reuse of the KV of shared prompt prefixes.

Metrics are coroutines; each `complete()` puts its request on a queue and awaits a future. One
worker thread owns the llama.cpp context. It keeps up to `parallel` requests in flight, one
sequence id each, and decodes them together: every step puts into one `llama_decode` batch the
next token of each generating sequence plus chunks of prompts still being read. A request that
finishes frees its slot, which the next queued request takes at the next step.

Prefix reuse: the KV cache is unified (all sequences share one cell pool), so the KV of a prompt
prefix can be shared by another sequence without copying data (`llama_memory_seq_cp`). Finished
sequences stay in the cache (least recently used first out) as a store of recent prefixes; a
new request starts from the longest prefix any live or kept sequence has in common with it.

Sampling is greedy under the request's grammar: the unconstrained argmax is tried first and the
grammar applied to the whole vocabulary only when it rejects that token (as llama.cpp's own
common sampler does). Temperature > 0 uses a per-request `dist` sampler seeded with `seed`.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from localeval.errors import JudgeError, ModelError, PromptTooLong
from localeval.judge.base import JudgeReply, JudgeRequest
from localeval.judge.llama import default_threads, gbnf_for_schema, make_chat_formatter

_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)], align=True)


def default_parallel(gpu_offload: bool = False) -> int:
    """Sequences decoded together when --parallel is not given.

    On a CPU, batched decoding is bound by reading the weights once per step; 4 sequences gave
    about twice the tokens/s of one on a 2-core machine and 8 no more. A GPU backend gains up to
    more sequences.
    """
    if gpu_offload:
        return 8
    return 4


@dataclass
class _Job:
    request: JudgeRequest
    future: asyncio.Future[JudgeReply]
    loop: asyncio.AbstractEventLoop
    tokens: list[int] | None = None


@dataclass
class _Seq:
    """One sequence id of the context: the tokens whose KV it holds, and what it is doing."""

    seq_id: int
    tokens: list[int] = field(default_factory=list)
    job: _Job | None = None
    pending: list[int] = field(default_factory=list)  # prompt tokens not yet decoded
    generated: list[int] = field(default_factory=list)
    n_prompt: int = 0
    n_reused: int = 0
    grammar: Any = None  # llama_sampler_p (grammar)
    chain: Any = None  # llama_sampler_p (temperature > 0 only)
    last_used: int = 0
    out_index: int = -1  # index in the current batch whose logits belong to this sequence
    chunk: list[int] = field(default_factory=list)  # tokens it has in the current batch

    @property
    def active(self) -> bool:
        return self.job is not None


@dataclass
class EngineStats:
    requests: int = 0
    prompt_tokens: int = 0
    prompt_tokens_processed: int = 0
    generated_tokens: int = 0
    decode_calls: int = 0
    decode_s: float = 0.0
    full_grammar_applies: int = 0
    evictions: int = 0


class BatchedLlamaJudge:
    """A judge that decodes up to `parallel` requests together in one llama.cpp context."""

    name = "llama.cpp"
    MIN_WAIT_PREFIX = 32  # tokens of shared prefix worth waiting a step for

    def __init__(self, model_path: Path, fingerprint: str, *, n_ctx: int = 4096,
                 n_threads: int | None = None, n_gpu_layers: int = -1, n_batch: int = 512,
                 seed: int = 0, temperature: float = 0.0, parallel: int = 4,
                 keep_prefixes: int | None = None, prefix_reuse: bool = True,
                 flash_attn: bool = False, repack: bool = False) -> None:
        try:
            import llama_cpp
            from llama_cpp import _internals, _logger
        except ImportError:
            raise ModelError("llama-cpp-python is not installed: run scripts/setup.sh "
                             "(or pip install llama-cpp-python)") from None
        if parallel < 1:
            raise ValueError("parallel must be >= 1")
        self._ll = llama_cpp
        _logger.set_verbose(False)
        self.model_path = Path(model_path)
        self.fingerprint = fingerprint
        self.seed, self.temperature = seed, temperature
        self.parallel = parallel
        self.prefix_reuse = prefix_reuse
        self.n_ctx = n_ctx  # the window of one request: prompt + answer
        self.stats = EngineStats()
        threads = n_threads or default_threads()
        mparams = llama_cpp.llama_model_default_params()
        mparams.n_gpu_layers = n_gpu_layers if n_gpu_layers >= 0 else 0x7FFFFFFF
        # llama.cpp's repacked Q4_K weights read prompts ~1.5x slower on this AVX-512 CPU than
        # the plain layout (72 vs 112 tok/s, 1.5B) and decode no faster: off unless asked for
        mparams.use_extra_bufts = repack
        try:
            self._model = _internals.LlamaModel(path_model=str(model_path), params=mparams,
                                                verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise ModelError(f"llama.cpp could not load {model_path}: {exc}; run "
                             "`python -m localeval models verify`") from None
        self.n_keep = max(4, parallel) if keep_prefixes is None else keep_prefixes
        n_seq = min(parallel + self.n_keep, llama_cpp.llama_max_parallel_sequences())
        self.n_keep = n_seq - parallel
        cparams = llama_cpp.llama_context_default_params()
        # every active request may use a full window; kept prefixes live in the same cells
        cparams.n_ctx = n_ctx * parallel
        cparams.n_batch = n_batch
        cparams.n_ubatch = min(n_batch, 512)
        cparams.n_seq_max = n_seq
        cparams.kv_unified = True
        cparams.n_threads = threads
        cparams.n_threads_batch = threads
        cparams.flash_attn_type = (llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn
                                   else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED)
        cparams.no_perf = True
        try:
            self._ctx = _internals.LlamaContext(model=self._model, params=cparams, verbose=False)
        except ValueError as exc:
            self._model.close()
            raise ModelError(f"llama.cpp could not create a context of {cparams.n_ctx} tokens for "
                             f"{parallel} sequences: {exc}; lower --parallel or --n-ctx") from None
        self.gpu_offload = bool(llama_cpp.llama_supports_gpu_offload()) and n_gpu_layers != 0
        self.n_batch = n_batch
        self._vocab = self._model.vocab
        self._n_vocab = llama_cpp.llama_vocab_n_tokens(self._vocab)
        self._mem = llama_cpp.llama_get_memory(self._ctx.ctx)
        self._batch = llama_cpp.llama_batch_init(n_batch, 0, 1)
        self._candidates = np.zeros(self._n_vocab, dtype=_TOKEN_DATA)
        self._candidates["id"] = np.arange(self._n_vocab, dtype=np.int32)
        self._one = np.zeros(1, dtype=_TOKEN_DATA)
        metadata = self._model.metadata()
        self._format = make_chat_formatter(
            metadata.get("tokenizer.chat_template"),
            lambda t: self._model.token_to_piece(t, special=True).rstrip(b"\0").decode(
                "utf-8", errors="ignore") if t >= 0 else "",
            self._model.token_eos(), self._model.token_bos())
        self._gbnf: dict[str, str] = {}
        self._seqs = [_Seq(i) for i in range(n_seq)]
        self._clock = 0
        self._queue: deque[_Job] = deque()
        self._cond = threading.Condition()
        self._closing = False
        self._failed: str | None = None
        self._touched: dict[int, asyncio.AbstractEventLoop] = {}  # loops told of a result
        self._thread = threading.Thread(target=self._run, name="localeval-judge", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ public interface

    def sampling_key(self) -> str:
        return f"temperature={self.temperature};seed={self.seed};greedy"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        loop = asyncio.get_running_loop()
        job = _Job(request, loop.create_future(), loop)
        with self._cond:
            if self._failed is not None:
                raise JudgeError(self._failed)
            if self._closing:
                raise JudgeError("the judge engine is closed")
            self._queue.append(job)
            self._cond.notify()
        return await job.future

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join()
        if self._batch is not None:
            self._ll.llama_batch_free(self._batch)
            self._batch = None
            for s in self._seqs:
                self._free_samplers(s)
            self._ctx.close()
            self._model.close()

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        """Chat-template the messages and tokenize (special tokens parsed, no extra BOS)."""
        return self._model.tokenize(self._format(messages).encode("utf-8"), add_bos=False,
                                    special=True)

    # ------------------------------------------------------------------ worker thread

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    woke = False
                    while not self._closing and not self._queue and not any(
                            s.active for s in self._seqs):
                        self._cond.wait()
                        woke = True
                    if self._closing:
                        break
                    loops = {id(j.loop): j.loop for j in self._queue}
                if woke or self._touched:
                    self._settle({**loops, **self._touched})
                    self._touched = {}
                self._admit()
                if any(s.active for s in self._seqs):
                    self._step()
        except BaseException as exc:  # never leave a caller waiting
            message = f"the judge engine failed: {type(exc).__name__}: {exc}"
            with self._cond:
                self._failed = message
            for s in self._seqs:
                if s.job is not None:
                    self._fail(s.job, JudgeError(message))
                    s.job = None
        finally:
            with self._cond:
                leftover = list(self._queue)
                self._queue.clear()
                if self._failed is None:
                    self._failed = "the judge engine is closed"
            for job in leftover:
                self._fail(job, JudgeError(self._failed))
            for s in self._seqs:
                if s.job is not None:
                    self._fail(s.job, JudgeError(self._failed))
                    s.job = None

    def _admit(self) -> None:
        """Give queued requests free slots, starting each from its longest cached prefix.

        A request whose prompt shares a longer prefix with a prompt still being read waits
        (a step or two) until that prefix is in the cache, instead of reading it again.
        """
        deferred: list[_Job] = []
        while sum(s.active for s in self._seqs) < self.parallel:
            with self._cond:
                if not self._queue:
                    break
                job = self._queue.popleft()
            if job.future.cancelled():
                continue
            if job.tokens is None:
                try:
                    job.tokens = self.prompt_tokens(job.request.messages)
                except Exception as exc:  # tokenizer/template failure: this request only
                    self._fail(job, JudgeError(f"{job.request.step}: could not build the "
                                               f"prompt: {exc}"))
                    continue
            if self.prefix_reuse and self._worth_waiting(job.tokens):
                deferred.append(job)
                continue
            try:
                tokens = job.tokens
                if not tokens:
                    raise JudgeError(f"{job.request.step}: the prompt is empty")
                if len(tokens) + job.request.max_tokens > self.n_ctx:
                    raise PromptTooLong(len(tokens), self.n_ctx, job.request.max_tokens)
                grammar = self._ll.llama_sampler_init_grammar(
                    self._vocab, self._grammar_text(job.request.answer_schema).encode("utf-8"),
                    b"root")
                if not grammar:
                    raise JudgeError(f"{job.request.step}: llama.cpp rejected the grammar of "
                                     "the output schema")
            except JudgeError as exc:
                self._fail(job, exc)
                continue
            self._start(job, tokens, grammar)
        if deferred:
            with self._cond:
                self._queue.extendleft(reversed(deferred))

    def _worth_waiting(self, tokens: list[int]) -> bool:
        cached = max((_common_prefix(s.tokens, tokens, len(tokens) - 1) for s in self._seqs),
                     default=0)
        coming = max((_common_prefix(s.tokens + s.pending, tokens, len(tokens) - 1)
                      for s in self._seqs if s.active and s.pending), default=0)
        return coming - cached >= self.MIN_WAIT_PREFIX

    def _start(self, job: _Job, tokens: list[int], grammar: Any) -> None:
        ll = self._ll
        # the longest prefix held by any sequence (leave one token to produce logits)
        best, best_len = None, 0
        for s in self._seqs if self.prefix_reuse else ():
            n = _common_prefix(s.tokens, tokens, len(tokens) - 1)
            if n > best_len:
                best, best_len = s, n
        idle = [s for s in self._seqs if not s.active]
        if best is not None and not best.active:
            target = best
        else:
            # an empty sequence, else the least recently used kept one
            target = min(idle, key=lambda s: (bool(s.tokens), s.last_used))
        if target is not best:
            ll.llama_memory_seq_rm(self._mem, target.seq_id, -1, -1)
            if best is not None and best_len > 0:
                ll.llama_memory_seq_cp(self._mem, best.seq_id, target.seq_id, 0, best_len)
            target.tokens = tokens[:best_len]
        else:
            ll.llama_memory_seq_rm(self._mem, target.seq_id, best_len, -1)
            del target.tokens[best_len:]
        self._clock += 1
        target.last_used = self._clock
        target.job = job
        target.pending = tokens[best_len:]
        target.generated = []
        target.n_prompt, target.n_reused = len(tokens), best_len
        self._free_samplers(target)
        target.grammar = grammar
        if self.temperature > 0:
            chain = ll.llama_sampler_chain_init(ll.llama_sampler_chain_default_params())
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_temp(self.temperature))
            ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_dist(self.seed))
            target.chain = chain
        self.stats.requests += 1
        self.stats.prompt_tokens += len(tokens)
        self.stats.prompt_tokens_processed += len(tokens) - best_len

    def _step(self) -> None:
        """One llama_decode over every active sequence, then sample where logits came out."""
        ll = self._ll
        batch = self._batch
        active = [s for s in self._seqs if s.active]
        for s in active:
            if s.job is not None and s.job.future.cancelled():
                self._finish(s, None)
        active = [s for s in self._seqs if s.active]
        if not active:
            return
        n = 0
        budget = self.n_batch
        # generating sequences first (one token each), then prompt chunks in slot order
        for s in sorted(active, key=lambda s: (bool(s.pending), s.seq_id)):
            s.out_index, s.chunk = -1, []
            if budget == 0:
                continue
            chunk = s.pending[:budget] if s.pending else [s.generated[-1]]
            start = len(s.tokens)
            for i, tok in enumerate(chunk):
                batch.token[n] = tok
                batch.pos[n] = start + i
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = s.seq_id
                batch.logits[n] = 0
                n += 1
            budget -= len(chunk)
            last_of_prompt = bool(s.pending) and len(chunk) == len(s.pending)
            if not s.pending or last_of_prompt:
                batch.logits[n - 1] = 1
                s.out_index = n - 1
            s.chunk = chunk
        batch.n_tokens = n
        t0 = time.perf_counter()
        while True:
            rc = ll.llama_decode(self._ctx.ctx, batch)
            if rc != 1:
                break
            if not self._evict_one():  # KV full: drop a kept prefix and try again
                raise RuntimeError("the KV cache is full with only active sequences in it")
        self.stats.decode_s += time.perf_counter() - t0
        self.stats.decode_calls += 1
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc}")
        for s in active:
            chunk = s.chunk
            s.tokens.extend(chunk)
            if s.pending:
                del s.pending[:len(chunk)]
            if s.out_index < 0:
                continue
            token = self._sample(s)
            self.stats.generated_tokens += 1
            if ll.llama_vocab_is_eog(self._vocab, token):
                self._finish(s, "stop")
                continue
            s.generated.append(token)
            if len(s.generated) >= s.job.request.max_tokens:  # type: ignore[union-attr]
                self._finish(s, "length")

    def _sample(self, s: _Seq) -> int:
        ll = self._ll
        ptr = ll.llama_get_logits_ith(self._ctx.ctx, s.out_index)
        logits = np.ctypeslib.as_array(ptr, shape=(self._n_vocab,))
        if s.chain is None:
            token = int(np.argmax(logits))
            one = self._one
            one["id"][0], one["logit"][0], one["p"][0] = token, logits[token], 0.0
            arr = ll.llama_token_data_array(
                data=one.ctypes.data_as(ll.llama_token_data_p), size=1, selected=-1, sorted=False)
            ll.llama_sampler_apply(s.grammar, ctypes.byref(arr))
            if not np.isfinite(one["logit"][0]):  # the grammar rejects it: filter everything
                self.stats.full_grammar_applies += 1
                cand = self._candidates
                cand["logit"] = logits
                cand["p"] = 0.0
                arr = ll.llama_token_data_array(
                    data=cand.ctypes.data_as(ll.llama_token_data_p), size=self._n_vocab,
                    selected=-1, sorted=False)
                ll.llama_sampler_apply(s.grammar, ctypes.byref(arr))
                token = int(np.argmax(cand["logit"]))
                if not np.isfinite(cand["logit"][token]):
                    raise JudgeError("the grammar allows no token (a bug in the schema grammar)")
        else:
            cand = self._candidates
            cand["logit"] = logits
            cand["p"] = 0.0
            arr = ll.llama_token_data_array(
                data=cand.ctypes.data_as(ll.llama_token_data_p), size=self._n_vocab,
                selected=-1, sorted=False)
            ll.llama_sampler_apply(s.grammar, ctypes.byref(arr))
            ll.llama_sampler_apply(s.chain, ctypes.byref(arr))
            token = int(cand["id"][arr.selected])
        ll.llama_sampler_accept(s.grammar, token)
        return token

    def _finish(self, s: _Seq, reason: str | None) -> None:
        job = s.job
        s.job = None
        s.pending = []
        self._clock += 1
        s.last_used = self._clock
        self._free_samplers(s)
        if job is None or reason is None:
            return
        text = b"".join(self._model.token_to_piece(t, special=False).rstrip(b"\0")
                        for t in s.generated).decode("utf-8", errors="replace")
        reply = JudgeReply(text=text, finish_reason=reason, prompt_tokens=s.n_prompt,
                           completion_tokens=len(s.generated) + (reason == "stop"),
                           prompt_tokens_processed=s.n_prompt - s.n_reused)
        self._touched[id(job.loop)] = job.loop
        _resolve(job, lambda f: f.set_result(reply))
        # keep at most n_keep finished sequences' KV as prefixes
        kept = [x for x in self._seqs if not x.active and x.tokens]
        while len(kept) > self.n_keep:
            victim = min(kept, key=lambda x: x.last_used)
            self._drop(victim)
            kept.remove(victim)

    def _evict_one(self) -> bool:
        kept = [x for x in self._seqs if not x.active and x.tokens]
        if not kept:
            return False
        self._drop(min(kept, key=lambda x: x.last_used))
        self.stats.evictions += 1
        return True

    def _drop(self, s: _Seq) -> None:
        self._ll.llama_memory_seq_rm(self._mem, s.seq_id, -1, -1)
        s.tokens = []

    def _free_samplers(self, s: _Seq) -> None:
        if s.grammar is not None:
            self._ll.llama_sampler_free(s.grammar)
            s.grammar = None
        if s.chain is not None:
            self._ll.llama_sampler_free(s.chain)
            s.chain = None

    def _fail(self, job: _Job, exc: Exception) -> None:
        self._touched[id(job.loop)] = job.loop
        _resolve(job, lambda f: f.set_exception(exc))

    def _settle(self, loops: dict[int, asyncio.AbstractEventLoop]) -> None:
        """Wait until each event loop has run everything it can before the next admission.

        A finished request wakes its metric, whose next request (or the next sample's first)
        enters the queue a few loop iterations later. Admitting only once the loop is idle makes
        the batches — and so the answers — the same from run to run, whatever the timing.
        """
        for loop in loops.values():
            idle = threading.Event()
            rounds = [0]

            def fence(loop: asyncio.AbstractEventLoop = loop, idle: threading.Event = idle,
                      rounds: list[int] = rounds) -> None:
                ready = getattr(loop, "_ready", None)  # the default loop's ready queue
                rounds[0] += 1
                busy = len(ready) > 0 if ready is not None else rounds[0] < 64
                if busy and rounds[0] < 10_000:
                    loop.call_soon(fence)
                else:
                    idle.set()

            try:
                loop.call_soon_threadsafe(fence)
            except RuntimeError:  # loop closed
                continue
            idle.wait(timeout=2.0)

    def _grammar_text(self, schema_json: str) -> str:
        if schema_json not in self._gbnf:
            self._gbnf[schema_json] = gbnf_for_schema(schema_json)
        return self._gbnf[schema_json]


def _resolve(job: _Job, action: Callable[[asyncio.Future[JudgeReply]], None]) -> None:
    """Complete a future from the worker thread (no-op if cancelled or its loop is gone)."""

    def apply() -> None:
        if not job.future.done():
            action(job.future)

    with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
        job.loop.call_soon_threadsafe(apply)


def _common_prefix(a: list[int], b: list[int], limit: int) -> int:
    n = min(len(a), len(b), limit)
    if n <= 0:
        return 0
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] holds; a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


def resolve_parallel(parallel: int | None, n_gpu_layers: int = -1) -> int:
    """--parallel as given, else the hardware default (asks llama.cpp about a GPU backend)."""
    if parallel is not None:
        return parallel
    try:
        import llama_cpp
    except ImportError:
        return 1
    return default_parallel(bool(llama_cpp.llama_supports_gpu_offload()) and n_gpu_layers != 0)
