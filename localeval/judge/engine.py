"""The judge engine: continuous batching over one llama.cpp context, a grammar per sequence,
shared prompt prefixes, and answers that do not depend on what else runs.

Metrics are coroutines; each `complete()` puts its request on a queue and awaits a future. One
worker thread owns the backend. It keeps up to `parallel` requests in flight, one KV stream
each, and alternates two kinds of `llama_decode` calls:
- generation steps: the next token of every generating sequence, at most 4 per decode call,
  where llama.cpp's CPU results for a row were measured not to depend on the other rows;
- a prompt chunk: up to `max_chunk` tokens of ONE sequence's prompt, cut where the prompt's own
  tokens say (judge/chunks.py) — fixed by the request alone.
With one KV stream per sequence (see llama.py), a request's answer is then the same whatever
other requests run beside it, in whatever order, with whatever `--parallel`.
A request that finishes frees its slot, which the next queued request takes.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from localeval.errors import JudgeError, PromptTooLong
from localeval.judge.base import FieldProbs, JudgeReply, JudgeRequest
from localeval.judge.chunks import MIN_CHUNK, cuts, next_cut
from localeval.judge.llama import Chunk
from localeval.judge.prefix_pool import PrefixPool, Slot
from localeval.judge.sampling import (
    allowed_probs,
    choice_probs,
    field_before_value,
    log_softmax,
    pick,
)

MAX_INVARIANT_STEP = 4
"""Tokens per generation decode call. Measured on the 1.5B judge (scripts/bench_engine.py, 16 dev
samples): steps of up to 4 tokens gave the same records as 1 token alone; steps of up to 8 did
not. llama.cpp's issue #24962 reports rows independent up to ~30 tokens on another CPU: the
threshold depends on the CPU's kernels, so the engine stays at the measured one."""


class Backend(Protocol):
    """What the engine needs from llama.cpp (LlamaBackend; a fake one in the tests)."""

    n_ctx: int
    n_seq: int
    tokenizer: Any

    def decode(self, chunks: list[Chunk]) -> list[np.ndarray]: ...

    def is_eog(self, token: int) -> bool: ...

    def seq_keep(self, seq_id: int, n: int) -> None: ...

    def seq_copy(self, src: int, dst: int, n: int) -> None: ...

    def grammar(self, gbnf: str) -> Any: ...

    def dist_sampler(self, temperature: float, seed: int) -> Any: ...

    def free_sampler(self, sampler: Any) -> None: ...

    def close(self) -> None: ...


def sampling_key(temperature: float, seed: int, max_chunk: int, min_chunk: int) -> str:
    """The engine settings that change answers, for the answer cache's key."""
    return (f"temperature={temperature};seed={seed};greedy;"
            f"cuts={min_chunk}/{max_chunk};kv=per-sequence")


def default_parallel(gpu_offload: bool = False) -> int:
    """Sequences decoded together when --parallel is not given (4 on a CPU, 8 on a GPU)."""
    return 8 if gpu_offload else 4


def resolve_parallel(parallel: int | None, n_gpu_layers: int = -1) -> int:
    """--parallel as given, else the hardware default (asks llama.cpp about a GPU backend)."""
    if parallel is not None:
        return parallel
    try:
        import llama_cpp
    except ImportError:
        return 1
    return default_parallel(bool(llama_cpp.llama_supports_gpu_offload()) and n_gpu_layers != 0)


@dataclass
class _Job:
    request: JudgeRequest
    future: asyncio.Future[JudgeReply]
    loop: asyncio.AbstractEventLoop
    order: int = 0
    tokens: list[int] | None = None
    cuts: list[int] = field(default_factory=list)


@dataclass
class _Active:
    """A request in a slot: what is left to read, what it generated, its samplers."""

    job: _Job
    slot: Slot
    pending: list[int]  # prompt tokens not yet decoded
    n_prompt: int
    n_reused: int
    grammar: Any = None
    chain: Any = None
    generated: list[int] = field(default_factory=list)
    text: bytearray = field(default_factory=bytearray)
    field_probs: list[FieldProbs] = field(default_factory=list)
    probe_at: int = -1  # where the key of the last recorded field starts in the text
    conts: list[list[int]] = field(default_factory=list)  # continuations still to score
    logprobs: dict[str, float] = field(default_factory=dict)
    first_logp: np.ndarray | None = None

    @property
    def reading(self) -> bool:
        return bool(self.pending) or bool(self.conts)


@dataclass
class EngineStats:
    requests: int = 0
    prompt_tokens: int = 0
    prompt_tokens_processed: int = 0
    generated_tokens: int = 0
    decode_calls: int = 0
    full_grammar_applies: int = 0
    evictions: int = 0


class Engine:
    """A judge that decodes up to `parallel` requests together over `backend`."""

    name = "llama.cpp"

    def __init__(self, backend: Backend, fingerprint: str, *, parallel: int,
                 max_chunk: int = 512, min_chunk: int = MIN_CHUNK, seed: int = 0,
                 temperature: float = 0.0, prefix_reuse: bool = True,
                 gbnf: Callable[[str], str] | None = None) -> None:
        if parallel < 1 or parallel > backend.n_seq:
            raise ValueError(f"parallel must be in 1..{backend.n_seq}")
        self.backend, self.fingerprint = backend, fingerprint
        self.parallel, self.max_chunk, self.min_chunk = parallel, max_chunk, min_chunk
        self.seed, self.temperature = seed, temperature
        self.n_ctx = backend.n_ctx
        self.gpu_offload = bool(getattr(backend, "gpu_offload", False))
        self.pool = PrefixPool(backend, backend.n_seq, reuse=prefix_reuse)
        self.stats = EngineStats()
        if gbnf is None:
            from localeval.judge.llama import gbnf_for_schema as gbnf
        self._gbnf_of = gbnf
        self._gbnf: dict[str, str] = {}
        self._active: list[_Active] = []
        self._queue: deque[_Job] = deque()
        self._order = 0
        self._cond = threading.Condition()
        self._closing = False
        self._failed: str | None = None
        self._thread = threading.Thread(target=self._run, name="localeval-judge", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ public interface

    def sampling_key(self) -> str:
        return sampling_key(self.temperature, self.seed, self.max_chunk, self.min_chunk)

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        return self.backend.tokenizer.prompt_tokens(messages)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        loop = asyncio.get_running_loop()
        with self._cond:
            if self._failed is not None:
                raise JudgeError(self._failed)
            if self._closing:
                raise JudgeError("the judge engine is closed")
            self._order += 1
            job = _Job(request, loop.create_future(), loop, self._order)
            self._queue.append(job)
            self._cond.notify()
        return await job.future

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify()
        if self._thread.is_alive() and threading.current_thread() is not self._thread:
            self._thread.join()
        self.backend.close()

    # ------------------------------------------------------------------ worker thread

    def _run(self) -> None:
        try:
            while True:
                with self._cond:
                    while not self._closing and not self._queue and not self._active:
                        self._cond.wait()
                    if self._closing:
                        break
                self._admit()
                self._step()
        except BaseException as exc:  # never leave a caller waiting
            with self._cond:
                self._failed = f"the judge engine failed: {type(exc).__name__}: {exc}"
        finally:
            with self._cond:
                leftover = list(self._queue)
                self._queue.clear()
                if self._failed is None:
                    self._failed = "the judge engine is closed"
            for job in leftover + [a.job for a in self._active]:
                _resolve(job, lambda f: f.set_exception(JudgeError(self._failed or "")))
            for a in self._active:
                self._free_samplers(a)
            self._active = []

    def _admit(self) -> None:
        """Give queued requests free slots, each from its longest reusable prefix.

        A request that would reuse more of a prompt still being read waits for it instead of
        reading that part twice (this changes speed, never answers).
        """
        deferred: list[_Job] = []
        while len(self._active) < self.parallel:
            with self._cond:
                if not self._queue:
                    break
                job = self._queue.popleft()
            if job.future.cancelled():
                continue
            try:
                if job.tokens is None:
                    job.tokens = self._tokens(job.request)
                    job.cuts = cuts(job.tokens, self.backend.tokenizer.piece,
                                    max_chunk=self.max_chunk, min_chunk=self.min_chunk)
                reading = [(a.slot, a.pending) for a in self._active if a.pending]
                if self.pool.worth_waiting(job.tokens, job.cuts, reading):
                    deferred.append(job)
                    continue
                self._start(job)
            except JudgeError as exc:
                _resolve(job, lambda f, exc=exc: f.set_exception(exc))
        if deferred:
            with self._cond:
                self._queue.extendleft(reversed(deferred))

    def _tokens(self, request: JudgeRequest) -> list[int]:
        try:
            tokens = self.backend.tokenizer.prompt_tokens(request.messages)
        except Exception as exc:  # tokenizer/template failure: this request only
            raise JudgeError(f"{request.step}: could not build the prompt: {exc}") from None
        if not tokens:
            raise JudgeError(f"{request.step}: the prompt is empty")
        longest = request.max_tokens
        if request.continuations:
            longest = max(len(self.backend.tokenizer.tokens(c)) for c in request.continuations)
            if longest > self.max_chunk:
                raise JudgeError(f"{request.step}: a continuation is longer than "
                                 f"{self.max_chunk} tokens")
        if len(tokens) + longest > self.n_ctx:
            raise PromptTooLong(len(tokens), self.n_ctx, longest)
        return tokens

    def _start(self, job: _Job) -> None:
        request, tokens = job.request, job.tokens or []
        grammar = chain = None
        conts: list[list[int]] = []
        if request.continuations:
            conts = [self.backend.tokenizer.tokens(c) for c in request.continuations]
        else:
            if request.answer_schema not in self._gbnf:
                self._gbnf[request.answer_schema] = self._gbnf_of(request.answer_schema)
            grammar = self.backend.grammar(self._gbnf[request.answer_schema])
            if self.temperature > 0:
                chain = self.backend.dist_sampler(self.temperature, self.seed)
        slot, reused = self.pool.acquire(tokens, job.cuts)
        self._active.append(_Active(job, slot, tokens[reused:], len(tokens), reused,
                                    grammar=grammar, chain=chain, conts=conts))
        self.stats.requests += 1
        self.stats.prompt_tokens += len(tokens)
        self.stats.prompt_tokens_processed += len(tokens) - reused

    def _step(self) -> None:
        """One generation step (if any sequence generates), then one prompt chunk (if any)."""
        for a in [a for a in self._active if a.job.future.cancelled()]:
            self._finish(a, None)
        generating = [a for a in self._active if not a.reading]
        for start in range(0, len(generating), MAX_INVARIANT_STEP):
            group = generating[start:start + MAX_INVARIANT_STEP]
            chunks = [Chunk(a.slot.seq_id, len(a.slot.tokens), [a.generated[-1]], [0])
                      for a in group]
            for a, logits in zip(group, self._decode(chunks), strict=True):
                self.pool.extend(a.slot, [a.generated[-1]], prompt=False)
                self._next_token(a, logits)
        reading = [a for a in self._active if a.reading]
        if reading:
            self._read(min(reading, key=lambda a: a.job.order))

    def _read(self, a: _Active) -> None:
        """Decode one prompt chunk of `a`, or score one of its continuations."""
        if a.pending:
            start = len(a.slot.tokens)
            chunk = a.pending[:next_cut(a.job.cuts, start, a.n_prompt) - start]
            last = len(chunk) == len(a.pending)
            outs = self._decode([Chunk(a.slot.seq_id, start, chunk, [len(chunk) - 1] if last
                                       else [])])
            self.pool.extend(a.slot, chunk, prompt=True)
            del a.pending[:len(chunk)]
            if not last:
                return
            if not a.conts:
                self._next_token(a, outs[0])
                return
            a.first_logp = log_softmax(outs[0])
        cont = a.conts.pop(0)
        total = float(a.first_logp[cont[0]])  # type: ignore[index]
        if len(cont) > 1:
            start = len(a.slot.tokens)
            outs = self._decode([Chunk(a.slot.seq_id, start, cont[:-1],
                                       list(range(len(cont) - 1)))])
            total += sum(float(log_softmax(lg)[tok]) for lg, tok in zip(outs, cont[1:],
                                                                         strict=True))
            self.pool.truncate(a.slot, start)
        a.logprobs[a.job.request.continuations[len(a.logprobs)]] = total
        if not a.conts:
            self._finish(a, "stop")

    def _decode(self, chunks: list[Chunk]) -> list[np.ndarray]:
        self.stats.decode_calls += 1
        return self.backend.decode(chunks)

    def _next_token(self, a: _Active, logits: np.ndarray) -> None:
        """Sample the next token of `a` from its logits (recording probes), or finish it."""
        self._probe(a, logits)
        token, full = pick(logits, a.grammar, a.chain)
        self.stats.full_grammar_applies += full
        self.stats.generated_tokens += 1
        a.grammar.accept(token)
        if self.backend.is_eog(token):
            self._finish(a, "stop")
            return
        a.generated.append(token)
        a.text += self.backend.tokenizer.piece(token)
        if len(a.generated) >= a.job.request.max_tokens:
            self._finish(a, "length")

    def _probe(self, a: _Active, logits: np.ndarray) -> None:
        fields = a.job.request.probe_fields
        if not fields:
            return
        found = field_before_value(a.text.decode("utf-8", errors="ignore"))
        if found is None or found[0] not in fields:
            return
        piece = self.backend.tokenizer.piece
        probs = {piece(t).decode("utf-8", errors="replace"): p
                 for t, p in allowed_probs(logits, a.grammar).items()}
        entry = FieldProbs(field=found[0], probs=probs)
        if found[1] == a.probe_at:  # whitespace came first: the value's own token wins
            a.field_probs[-1] = entry
        else:
            a.field_probs.append(entry)
            a.probe_at = found[1]

    def _finish(self, a: _Active, reason: str | None) -> None:
        self._active.remove(a)
        self.pool.release(a.slot)
        self.stats.evictions = self.pool.evictions
        self._free_samplers(a)
        if reason is None:
            return
        if a.job.request.continuations:
            probs = choice_probs(a.logprobs)
            reply = JudgeReply(text=_json(probs), finish_reason="stop", prompt_tokens=a.n_prompt,
                               prompt_tokens_processed=a.n_prompt - a.n_reused,
                               choice_probs=probs)
        else:
            reply = JudgeReply(text=a.text.decode("utf-8", errors="replace"),
                               finish_reason=reason, prompt_tokens=a.n_prompt,
                               completion_tokens=len(a.generated) + (reason == "stop"),
                               prompt_tokens_processed=a.n_prompt - a.n_reused,
                               field_probs=a.field_probs)
        _resolve(a.job, lambda f: f.set_result(reply))

    def _free_samplers(self, a: _Active) -> None:
        if a.grammar is not None:
            a.grammar.free()
            a.grammar = None
        if a.chain is not None:
            self.backend.free_sampler(a.chain)
            a.chain = None


def _json(probs: dict[str, float]) -> str:
    import json

    return json.dumps(probs, ensure_ascii=False)


def _resolve(job: _Job, action: Callable[[asyncio.Future[JudgeReply]], None]) -> None:
    """Complete a future from the worker thread (no-op if cancelled or its loop is gone)."""

    def apply() -> None:
        if not job.future.done():
            action(job.future)

    with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
        job.loop.call_soon_threadsafe(apply)
