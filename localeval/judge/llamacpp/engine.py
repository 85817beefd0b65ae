"""The judge engine: continuous batching over one llama.cpp context, a grammar per sequence,
shared prompt prefixes, and answers that do not depend on what else runs.

Metrics are coroutines; each `complete()` puts its request on a queue and awaits a future. One
worker thread owns the backend. It keeps up to `parallel` requests in flight, one KV stream
each, and alternates two kinds of `llama_decode` calls:
- generation steps: the next token of every generating sequence, at most 4 per decode call,
  where llama.cpp's CPU results for a row were measured not to depend on the other rows;
- a prompt chunk: up to `max_chunk` tokens of ONE sequence's prompt, cut where the prompt's own
  tokens say (judge/llamacpp/chunks.py) — fixed by the request alone; or the answer of a request
  whose schema fixes all but a few choices (judge/llamacpp/plan.py), read the same way instead of
  generated.
With one KV stream per sequence (see llama.py), a request's answer is then the same whatever
other requests run beside it, in whatever order, with whatever `--parallel`.
A request that finishes frees its slot, which the next queued request takes. Which requests
start and what each step decodes is judge/llamacpp/schedule.py, shared with the estimate.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections import deque
from collections.abc import Callable

import numpy as np

from localeval.errors import JudgeError, PromptTooLong
from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest
from localeval.judge.llamacpp.chunks import MIN_CHUNK, cuts, next_cut
from localeval.judge.llamacpp.jobs import Active, Job
from localeval.judge.llamacpp.llama import DecodeBackend, DecodeChunk
from localeval.judge.llamacpp.plan import Reading, plan_for
from localeval.judge.llamacpp.prefix_pool import PrefixPool
from localeval.judge.llamacpp.sampling import (
    allowed_probs,
    choice_probs,
    field_before_value,
    log_softmax,
    pick,
)
from localeval.judge.llamacpp.schedule import admit, step


def sampling_key(temperature: float, seed: int, max_chunk: int, min_chunk: int) -> str:
    """The engine settings that change answers, for the answer cache's key."""
    return (f"temperature={temperature};seed={seed};greedy;"
            f"cuts={min_chunk}/{max_chunk};kv=per-sequence;planned=read-with-prompt")


class Engine:
    """A judge that decodes up to `parallel` requests together over `backend`."""

    name = "llama.cpp"

    def __init__(self, backend: DecodeBackend, fingerprint: str, *, parallel: int,
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
        if gbnf is None:
            from localeval.judge.llamacpp.llama import gbnf_for_schema as gbnf
        self._gbnf_of = gbnf
        self._gbnf: dict[str, str] = {}
        self._active: list[Active] = []
        self._queue: deque[Job] = deque()
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
            job = Job(request, loop.create_future(), loop, self._order)
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
        """Start queued requests in free slots (judge/llamacpp/schedule.py decides which)."""
        for job in admit(self._queue, self._active, self.parallel, self.pool, self._prompt):
            try:
                self._start(job)
            except JudgeError as exc:
                _resolve(job, lambda f, exc=exc: f.set_exception(exc))

    def _prompt(self, job: Job) -> tuple[list[int], list[int]] | None:
        """A queued job's prompt tokens and cuts (worked out once); None when it was cancelled
        or its prompt cannot be read (its caller then gets the error)."""
        if job.future.cancelled():
            return None
        if job.tokens is None:
            try:
                job.tokens = self._tokens(job.request)
            except JudgeError as exc:
                _resolve(job, lambda f, exc=exc: f.set_exception(exc))
                return None
            job.cuts = cuts(job.tokens, self.backend.tokenizer.piece,
                            max_chunk=self.max_chunk, min_chunk=self.min_chunk)
        return job.tokens, job.cuts

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

    def _start(self, job: Job) -> None:
        request, tokens = job.request, job.tokens or []
        grammar = chain = plan = None
        conts: list[list[int]] = []
        if request.continuations:
            conts = [self.backend.tokenizer.tokens(c) for c in request.continuations]
        elif self.temperature == 0 and (parts := plan_for(request.answer_schema)):
            plan = Reading.start(parts, self.backend.tokenizer.tokens)
        if not request.continuations and plan is None:
            if request.answer_schema not in self._gbnf:
                self._gbnf[request.answer_schema] = self._gbnf_of(request.answer_schema)
            grammar = self.backend.grammar(self._gbnf[request.answer_schema])
            if self.temperature > 0:
                chain = self.backend.dist_sampler(self.temperature, self.seed)
        slot, reused = self.pool.acquire(tokens, job.cuts)
        self._active.append(Active(job, slot, tokens[reused:], len(tokens), reused,
                                    grammar=grammar, chain=chain, conts=conts, plan=plan))

    def _step(self) -> None:
        """One step of the schedule (judge/llamacpp/schedule.py): generation calls, then one
        chunk."""
        for a in [a for a in self._active if a.job.future.cancelled()]:
            self._finish(a, None)
        step(self._active, self._generate, self._read)

    def _generate(self, group: list[Active]) -> None:
        """One generation call: the next token of each sequence in `group`."""
        chunks = [DecodeChunk(a.slot.seq_id, len(a.slot.tokens), [a.generated[-1]], [0])
                  for a in group]
        for a, logits in zip(group, self._decode(chunks, group), strict=True):
            self.pool.extend(a.slot, [a.generated[-1]], prompt=False)
            self._next_token(a, logits)

    def _read(self, a: Active) -> None:
        """Decode one prompt chunk of `a`, or a chunk of its planned answer, or score one of
        its continuations."""
        if a.pending:
            start = len(a.slot.tokens)
            chunk = a.pending[:next_cut(a.job.cuts, start, a.n_prompt) - start]
            last = len(chunk) == len(a.pending)
            if last and a.plan is not None and (
                    len(chunk) + len(a.plan.chunk(0)[0]) <= self.max_chunk):
                self._read_plan(a, a.plan, prompt=chunk)
                return
            want = last and a.plan is None
            outs = self._decode([DecodeChunk(a.slot.seq_id, start, chunk,
                                             [len(chunk) - 1] if want else [])], [a])
            self.pool.extend(a.slot, chunk, prompt=True)
            del a.pending[:len(chunk)]
            if not want:
                return
            if not a.conts:
                self._next_token(a, outs[0])
                return
            a.first_logp = log_softmax(outs[0])
        elif a.plan is not None:
            self._read_plan(a, a.plan)
            return
        cont = a.conts.pop(0)
        total = float(a.first_logp[cont[0]])  # type: ignore[index]
        if len(cont) > 1:
            start = len(a.slot.tokens)
            outs = self._decode([DecodeChunk(a.slot.seq_id, start, cont[:-1],
                                             list(range(len(cont) - 1)))], [a])
            total += sum(float(log_softmax(lg)[tok]) for lg, tok in zip(outs, cont[1:],
                                                                         strict=True))
            self.pool.truncate(a.slot, start)
        a.logprobs[a.job.request.continuations[len(a.logprobs)]] = total
        if not a.conts:
            self._finish(a, "stop")

    def _read_plan(self, a: Active, plan: Reading, prompt: list[int] | None = None) -> None:
        """Read the planned answer's next stretch, choose its slots from the logits, cut back
        where a choice differs from the guess, or start its next free string
        (judge/llamacpp/plan.py). `prompt`: the prompt's last chunk, read in the same call as
        the answer's first stretch when both fit in `max_chunk` tokens (one call fewer per
        request); its KV is then no prefix that another request may reuse, since that request
        would read those tokens in a call of another size."""
        start = len(a.slot.tokens)
        head = prompt or []
        tokens, outputs = plan.chunk(start + len(head) - a.n_prompt)
        tap = bool(a.job.request.hidden_layers)
        outs = self._decode([DecodeChunk(a.slot.seq_id, start, head + tokens,
                                         [len(head) + k for k in outputs])], [a], hidden=tap)
        if head:
            self.pool.extend(a.slot, head, prompt=False)
            del a.pending[:len(head)]
        self.pool.extend(a.slot, tokens, prompt=False)
        a.forced += len(tokens)
        before = len(plan.probs)
        cut, first = plan.take(outs)
        if tap:  # the residual stream where each slot just chosen was decided
            rows = self.backend.last_hidden
            a.hidden += [rows[k] for k in range(len(plan.probs) - before)]
        if cut is not None:
            self.pool.truncate(a.slot, a.n_prompt + cut)
        elif first is not None:
            assert plan.free is not None
            a.grammar = self.backend.grammar(plan.free.gbnf())
            self._next_token(a, first)
        if plan.finished:
            self._finish(a, "stop")

    def _next_free_token(self, a: Active, plan: Reading, logits: np.ndarray) -> None:
        """The next token of a planned answer's free string; when it closes the string, the
        rest of the answer is read (or the answer is complete)."""
        token, _ = pick(logits, a.grammar)
        a.grammar.accept(token)
        a.generated.append(token)
        if plan.add(token, self.backend.tokenizer.piece(token)):
            a.grammar.free()
            a.grammar = None
            if plan.finished:
                self._finish(a, "stop")
        elif len(a.generated) >= a.job.request.max_tokens:
            self._finish(a, "length")

    def _decode(self, chunks: list[DecodeChunk], owners: list[Active],
                hidden: bool = False) -> list[np.ndarray]:
        """One llama_decode call; its seconds are shared among the owners by their tokens.
        `hidden`: also read the tapped layers at the outputs (backend.last_hidden)."""
        started = time.perf_counter()
        out = self.backend.decode(chunks, hidden=True) if hidden else self.backend.decode(chunks)
        seconds = time.perf_counter() - started
        total = sum(len(c.tokens) for c in chunks) or 1
        for a, c in zip(owners, chunks, strict=True):
            a.seconds += seconds * len(c.tokens) / total
        return out

    def _next_token(self, a: Active, logits: np.ndarray) -> None:
        """Sample the next token of `a` from its logits (recording probes), or finish it."""
        if a.plan is not None:
            self._next_free_token(a, a.plan, logits)
            return
        self._probe(a, logits)
        token, _ = pick(logits, a.grammar, a.chain)
        a.grammar.accept(token)
        if self.backend.is_eog(token):
            self._finish(a, "stop")
            return
        a.generated.append(token)
        a.text += self.backend.tokenizer.piece(token)
        if len(a.generated) >= a.job.request.max_tokens:
            self._finish(a, "length")

    def _probe(self, a: Active, logits: np.ndarray) -> None:
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

    def _finish(self, a: Active, reason: str | None) -> None:
        self._active.remove(a)
        self.pool.release(a.slot)
        self._free_samplers(a)
        if reason is None:
            return
        if a.plan is not None:
            fields = a.job.request.probe_fields
            states = a.hidden or [None] * len(a.plan.probs)
            reply = JudgeReply(text=a.plan.text(), finish_reason=reason, prompt_tokens=a.n_prompt,
                               prompt_tokens_processed=a.n_prompt - a.n_reused,
                               decode_s=round(a.seconds, 4),
                               completion_tokens=len(a.generated), forced_tokens=a.forced,
                               field_probs=[FieldProbs(field=f, probs=p, hidden=h)
                                            for (f, p), h in zip(a.plan.probs, states,
                                                                 strict=True) if f in fields])
        elif a.job.request.continuations:
            probs = choice_probs(a.logprobs)
            reply = JudgeReply(text=_json(probs), finish_reason="stop", prompt_tokens=a.n_prompt,
                               prompt_tokens_processed=a.n_prompt - a.n_reused,
                               decode_s=round(a.seconds, 4),
                               choice_probs=probs)
        else:
            reply = JudgeReply(text=a.text.decode("utf-8", errors="replace"),
                               finish_reason=reason, prompt_tokens=a.n_prompt,
                               completion_tokens=len(a.generated) + (reason == "stop"),
                               prompt_tokens_processed=a.n_prompt - a.n_reused,
                               decode_s=round(a.seconds, 4),
                               field_probs=a.field_probs)
        _resolve(a.job, lambda f: f.set_result(reply))

    def _free_samplers(self, a: Active) -> None:
        if a.grammar is not None:
            a.grammar.free()
            a.grammar = None
        if a.chain is not None:
            self.backend.free_sampler(a.chain)
            a.chain = None


def _json(probs: dict[str, float]) -> str:
    import json

    return json.dumps(probs, ensure_ascii=False)


def _resolve(job: Job, action: Callable[[asyncio.Future[JudgeReply]], None]) -> None:
    """Complete a future from the worker thread (no-op if cancelled or its loop is gone)."""

    def apply() -> None:
        if not job.future.done():
            action(job.future)

    with contextlib.suppress(RuntimeError):  # a closed loop: nobody is waiting any more
        job.loop.call_soon_threadsafe(apply)
