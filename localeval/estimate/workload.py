"""What each recorded request costs the engine, as the engine would do it: its prompt's tokens
and cuts (judge/llamacpp/chunks.py), and its answer as stretches to read and tokens to generate (the
engine's own judge/llamacpp/plan.Reading follows the answer laid out by its schema; free strings and
unplanned answers are generated, their length estimated)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from localeval.judge.interface import JudgeRequest
from localeval.judge.llamacpp import (
    MIN_CHUNK,
    Choice,
    Free,
    Reading,
    cuts,
    last_chunk,
    plan_for,
)


class Vocab(Protocol):
    """The judge's tokenizer (judge/llamacpp/llama.Tokenizer, or CharVocab without a model)."""

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]: ...

    def tokens(self, text: str) -> list[int]: ...

    def piece(self, token: int) -> bytes: ...


class CharVocab:
    """A stand-in tokenizer for judges without one (the fake judge): 4 characters a token."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._pieces: list[bytes] = []

    def _id(self, text: str) -> int:
        if text not in self._ids:
            self._ids[text] = len(self._pieces)
            self._pieces.append(text.encode("utf-8"))
        return self._ids[text]

    def tokens(self, text: str) -> list[int]:
        return [self._id(text[i:i + 4]) for i in range(0, len(text), 4)]

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        out: list[int] = []
        for m in messages:
            out += [self._id(f"<{m['role']}>"), *self.tokens(m["content"])]
        return out

    def piece(self, token: int) -> bytes:
        return self._pieces[token]


@dataclass
class RequestLoad:
    """The load one judge request puts on the engine: prompt tokens and cuts, then the answer as
    alternating stretches: ("read", n tokens) and ("gen", n tokens)."""

    step: str
    sample: int
    tokens: list[int]
    cuts: list[int]
    answer: list[tuple[str, int]] = field(default_factory=list)
    planned: bool = False
    choices: int = 0
    """Values the judge chooses (one token each) in a planned answer: the floor's decisions."""
    answer_with_prompt: bool = False
    """A planned answer whose first stretch the engine reads in one call with the prompt's last
    chunk, since both fit in max_chunk tokens (judge/llamacpp/engine.py)."""

    @property
    def generated(self) -> int:
        return sum(n for kind, n in self.answer if kind == "gen")

    @property
    def forced(self) -> int:
        return sum(n for kind, n in self.answer if kind == "read")


class _Guesses:
    """Logits under which every choice takes its guess (its last value, which the engine lays
    out first): the answer the estimate assumes, with no cut and no reading again."""

    def __getitem__(self, ids: list[int]) -> np.ndarray:
        return np.arange(len(ids), dtype=np.float64)


def answer_work(schema_json: str, vocab: Vocab, free_tokens: float, temperature: float
                ) -> tuple[list[tuple[str, int]], bool]:
    """The answer's stretches, as the engine follows a planned answer
    (judge/llamacpp/plan.Reading, run here on placeholder logits): literal text and choices read
    in chunks, each free string generated (`free_tokens` tokens, its closing quote included,
    which is read again with what follows it). Any other answer is generated whole (its
    placeholder's tokens, each string counted as `free_tokens`)."""
    parts = plan_for(schema_json) if temperature == 0 else None
    reading = Reading.start(parts, vocab.tokens) if parts is not None else None
    if reading is None:
        return [("gen", _unplanned_tokens(schema_json, vocab, free_tokens))], False
    out: list[tuple[str, int]] = []
    held = 0  # answer tokens whose KV the sequence holds
    while not reading.finished:
        tokens, outputs = reading.chunk(held)
        out.append(("read", len(tokens)))
        held += len(tokens)
        _, first = reading.take([_Guesses()] * len(outputs))  # type: ignore[list-item]
        if first is None:
            break
        assert reading.free is not None
        n = _free(reading.free, free_tokens)
        for k in range(n):  # the free string's tokens; the last closes it
            reading.add(-1, b'"' if k == n - 1 else b"x")
        out.append(("gen", n))
        held += n - 1  # the last generated token is decoded with the next chunk
    return [w for w in out if w[1] > 0], True


def _free(part: Free, free_tokens: float) -> int:
    top = free_tokens if part.max_chars is None else min(free_tokens, part.max_chars + 1)
    return max(1, round(top))


def _unplanned_tokens(schema_json: str, vocab: Vocab, free_tokens: float) -> int:
    from localeval.estimate.dryrun import placeholder

    value = placeholder(schema_json)
    strings: list[str] = []

    def blank(v: Any) -> Any:
        if isinstance(v, str):
            strings.append(v)
            return ""
        if isinstance(v, dict):
            return {k: blank(x) for k, x in v.items()}
        if isinstance(v, list):
            return [blank(x) for x in v]
        return v

    skeleton = json.dumps(blank(value), ensure_ascii=False)
    return len(vocab.tokens(skeleton)) + round(len(strings) * free_tokens) + 1  # + end of text


def build(request: JudgeRequest, sample: int, tokens: list[int], vocab: Vocab, *,
          max_chunk: int, free_tokens: float, temperature: float) -> RequestLoad:
    """The engine's work for one request. A prompt-only request (continuations) generates
    nothing: each continuation but its first token is read after the prompt."""
    if request.continuations:
        reads = [len(vocab.tokens(c)) - 1 for c in request.continuations]
        answer, planned = [("read", n) for n in reads if n > 0], True
    else:
        answer, planned = answer_work(request.answer_schema, vocab, free_tokens, temperature)
    parts = plan_for(request.answer_schema) if planned and not request.continuations else None
    choices = sum(isinstance(p, Choice) for p in parts or ())
    cut_points = cuts(tokens, vocab.piece, max_chunk=max_chunk, min_chunk=MIN_CHUNK)
    first = answer[0][1] if answer and answer[0][0] == "read" else 0
    return RequestLoad(request.step, sample, tokens, cut_points, answer, planned, choices,
                       answer_with_prompt=parts is not None and (
                           last_chunk(cut_points, len(tokens)) + first <= max_chunk))
