"""The one door metrics use to reach the judge: cache lookup, the call, parsing, statistics."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from localeval.errors import JudgeError, first_error
from localeval.judge.cache import AnswerCache, cache_key
from localeval.judge.interface import Judge, JudgeReply, JudgeRequest, VerdictScorer

T = TypeVar("T", bound=BaseModel)


STEP_FIGURES = ("calls", "cached", "prompt_tokens", "prompt_tokens_processed",
                "generated_tokens", "forced_tokens", "decode_s")
"""What JudgeStats keeps per step, once: requests the judge answered, requests served without
it (the cache, or an identical request in flight), prompt tokens, those read (not served from a
prefix), answer tokens generated, answer tokens read instead (judge/llamacpp/plan.py), and the
step's share of the judge's decode seconds."""
ACCOUNT = STEP_FIGURES[3:]
"""What `summary.json` → `judge.tokens_by_step` shows of each step."""


def _total(figure: str, kind: type) -> property:
    """A run total of JudgeStats: the step figure summed over the steps."""
    return property(lambda self: kind(self.total(figure)),
                    doc=f"{figure} over every step ({kind.__name__})")


@dataclass
class JudgeStats:
    """What the judge did in a run. The figures of its answers are kept once, per step
    (`steps`); the run's totals and summary.json's per-step views are sums and slices of it."""

    steps: dict[str, dict[str, float]] = field(default_factory=dict)
    failures: int = 0
    own_tokens: int = 0
    """The floor's reading part: the contexts, question, answer and ground truth of every sample
    the judge worked on (not only served from the cache), each tokenized once."""
    choices: int = 0
    """The floor's deciding part: answer slots the judge chose (a verdict, a flag), one token
    each; with the tokens generated, what an answer must carry at least."""
    judged: set[str] = field(default_factory=set, repr=False)

    def add(self, request: JudgeRequest, reply: JudgeReply) -> None:
        step = self.steps.setdefault(request.step, dict.fromkeys(STEP_FIGURES, 0))
        if reply.cached:
            step["cached"] += 1
            return
        self.judged.add(request.sample_id)
        self.choices += len(reply.field_probs)
        for key, value in (("calls", 1), ("prompt_tokens", reply.prompt_tokens),
                           ("prompt_tokens_processed", reply.prompt_tokens_processed),
                           ("generated_tokens", reply.completion_tokens),
                           ("forced_tokens", reply.forced_tokens), ("decode_s", reply.decode_s)):
            step[key] += value

    def total(self, figure: str) -> float:
        return sum(step[figure] for step in self.steps.values())

    calls = _total("calls", int)
    cached = _total("cached", int)
    prompt_tokens = _total("prompt_tokens", int)
    prompt_tokens_processed = _total("prompt_tokens_processed", int)
    completion_tokens = _total("generated_tokens", int)
    forced_tokens = _total("forced_tokens", int)
    decode_s = _total("decode_s", float)

    @property
    def by_step(self) -> dict[str, int]:
        """Requests per step (summary.json → judge.calls_by_step)."""
        return {name: int(step["calls"]) for name, step in self.steps.items() if step["calls"]}

    @property
    def tokens_by_step(self) -> dict[str, dict[str, float]]:
        """Per step, the ACCOUNT figures (summary.json → judge.tokens_by_step)."""
        return {name: {k: round(step[k], 4) for k in ACCOUNT}
                for name, step in self.steps.items() if step["calls"]}

    def floor(self) -> dict[str, float] | None:
        """The floor beside the work (`docs/engine.md`, *Answers laid out by their schema*)."""
        return floor_account(self.own_tokens, self.choices + self.completion_tokens,
                             self.prompt_tokens_processed + self.completion_tokens
                             + self.forced_tokens)


def floor_account(own: int, decisions: int, work: int) -> dict[str, float] | None:
    """The floor (the samples' own tokens read once plus the tokens that carry a decision: a
    slot the judge chose, a token it generated) and the work (read + generated + forced) over
    it; None when no sample was counted. summary.json → judge.floor and run --estimate."""
    if not own:
        return None
    return {"own_tokens": own, "decision_tokens": decisions, "floor_tokens": own + decisions,
            "work_tokens": work, "work_over_floor": round(work / (own + decisions), 3)}


class JudgeClient:
    """Cache, in-flight sharing and parsing around a judge.

    The cache can only make a run cheaper, never stop it: when reading or writing it fails
    (disk full, database locked, read-only file), the client warns once through `warn`, records
    why in `cache_error` and goes on without the cache.
    """

    def __init__(self, judge: Judge, cache: AnswerCache | None = None,
                 verifier: VerdictScorer | None = None) -> None:
        self.judge = judge
        self.cache = cache
        self.verifier = verifier
        """Scores the verdicts of the steps it was made for from the judge's activations (the
        verifier plug-in, localeval/verifier/); None: the judge's own P(supported)."""
        self.stats = JudgeStats()
        self.cache_error: str | None = None
        self.warn: Callable[[str], None] | None = None
        self._sampling = judge.sampling_key()
        self._in_flight: dict[str, asyncio.Future[JudgeReply]] = {}

    def _cache_failed(self, action: str, exc: Exception) -> None:
        assert self.cache is not None
        self.cache_error = (f"the answer cache {self.cache.path} could not {action} an answer "
                            f"({type(exc).__name__}: {exc}); the run goes on without the cache")
        if self.warn is not None:
            self.warn(f"warning: {self.cache_error}")
        with contextlib.suppress(Exception):
            self.cache.close()
        self.cache = None

    def _cached(self, key: str) -> JudgeReply | None:
        if self.cache is None:
            return None
        try:
            return self.cache.get(key)
        except Exception as exc:  # sqlite3.Error, OSError, ...: a miss, then no cache
            self._cache_failed("read", exc)
            return None

    def _store(self, key: str, reply: JudgeReply) -> None:
        if self.cache is None:
            return
        try:
            self.cache.put(key, reply)
        except Exception as exc:
            self._cache_failed("store", exc)

    async def ask(self, request: JudgeRequest, schema: type[T]) -> T:
        """Send one request (or serve it from the cache) and parse the answer into `schema`.

        The same request asked twice while the first is in flight is sent once; the second
        waits for that answer and counts as cached.
        """
        return (await self.ask_reply(request, schema))[0]

    async def ask_reply(self, request: JudgeRequest, schema: type[T]) -> tuple[T, JudgeReply]:
        """`ask`, also returning the reply itself (its field probabilities, token counts)."""
        reply = await self._reply(request)
        if reply.finish_reason == "length":
            self.stats.failures += 1
            raise JudgeError(f"{request.step}: the judge's answer reached max_tokens="
                             f"{request.max_tokens} before it was complete; raise --max-tokens")
        try:
            return schema.model_validate_json(reply.text), reply
        except ValidationError as exc:
            self.stats.failures += 1
            loc, msg = first_error(exc, "top level")
            raise JudgeError(f"{request.step}: the judge's answer does not match the schema "
                             f"({msg} at {loc}): {reply.text[:120]!r}") from None

    async def ask_choices(self, request: JudgeRequest) -> dict[str, float]:
        """A prompt-only request (`request.continuations`), or the cache's answer to it: the
        probability of each continuation (JudgeReply.choice_probs), nothing generated."""
        if not request.continuations:
            raise ValueError(f"{request.step}: ask_choices needs continuations")
        reply = await self._reply(request)
        if set(reply.choice_probs) != set(request.continuations):
            self.stats.failures += 1
            raise JudgeError(f"{request.step}: the judge gave no probability for each of "
                             f"{', '.join(request.continuations)} (this judge cannot score "
                             f"continuations)")
        return reply.choice_probs

    async def _reply(self, request: JudgeRequest) -> JudgeReply:
        """The judge's reply to one request: from the cache, from an identical request in
        flight, or asked; counted in `stats`."""
        verifier = self.verifier
        if verifier is not None and verifier.applies(request):
            request = verifier.prepare(request)
        key = cache_key(self.judge.fingerprint, self._sampling, request)
        reply = self._cached(key)
        if reply is None and key in self._in_flight:
            reply = (await asyncio.shield(self._in_flight[key])).model_copy(update={"cached": True})
        if reply is None:
            pending: asyncio.Future[JudgeReply] = asyncio.get_running_loop().create_future()
            self._in_flight[key] = pending
            try:
                reply = await self.judge.complete(request)
                if request.verifier and verifier is not None:
                    reply = verifier.scored(reply)
            except BaseException as exc:
                if not isinstance(exc, Exception):
                    exc = JudgeError(f"{request.step}: the request was cancelled")
                pending.set_exception(exc)
                pending.exception()  # retrieved: no "never retrieved" warning
                raise
            else:  # the samples waiting on this answer get it before the cache is touched
                pending.set_result(reply)
            finally:
                del self._in_flight[key]
            self._store(key, reply)
        self.stats.add(request, reply)
        return reply

    def count_floor(self, texts: list[str | None], sample_id: str) -> None:
        """Add a finished sample's own texts to the floor, when the judge worked on it and can
        count tokens (the llama.cpp judge; a fake judge cannot)."""
        count = getattr(self.judge, "text_tokens", None)
        if sample_id not in self.stats.judged or not callable(count):
            return
        self.stats.judged.discard(sample_id)
        self.stats.own_tokens += sum(count(t) for t in texts if t)

    def close(self) -> None:
        self.judge.close()
        if self.cache is not None:
            self.cache.close()
