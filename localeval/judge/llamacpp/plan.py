"""Answers laid out by their schema: fixed text read like a prompt, only the choices and the
free text decided by the judge.

A judge's answer is JSON whose keys, brackets, quotes and separators the schema fixes: the bare
verdict lists (`{"verdicts": [{"verdict": 0|1}, …]}` with exactly n items) are fixed text but
for one choice per item; the generated questions are fixed text around a question and a reason
per item. Generating the fixed text costs one decode step per token; reading it costs one chunk.
`plan_for(schema)` lays such a schema out as `json.dumps` would: literal text, *choices* (a
field's allowed values, each one token) and *free* strings. A schema with a varying length (a
list of statements or entities), an optional field or a string pattern has no plan and is
generated under its grammar as before.

`Reading` follows a plan. Literal text and choices up to the next free string (or up to the last
choice) are read as one chunk after what came before, each choice filled with a guess (its last
value), with logits before each choice. A choice takes the value the judge finds most likely (what
greedy generation under the grammar takes) and records the choices' probabilities; where that
differs from the guess, the answer is cut there and the rest read again. A free string is
generated token by token under a grammar for a JSON string's body and its closing quote. Text
after the last choice is never decoded. Every chunk follows from the request alone, so an answer
does not depend on what runs beside it, as with generation (docs/engine.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Choice:
    """One value the judge chooses: a JSON field's allowed values, as JSON text."""

    field: str
    choices: tuple[str, ...]


@dataclass(frozen=True)
class Free:
    """A string value the judge writes (its opening quote is literal text before it)."""

    field: str
    min_chars: int = 0
    max_chars: int | None = None

    def gbnf(self) -> str:
        """A JSON string's body and its closing quote, as llama.cpp's JSON grammar writes it."""
        top = "" if self.max_chars is None else str(self.max_chars)
        rep = "*" if not self.min_chars and top == "" else f"{{{self.min_chars},{top}}}"
        return (f'root ::= char{rep} "\\""\n'
                'char ::= [^"\\\\\\x7F\\x00-\\x1F] | [\\\\] (["\\\\bfnrt] | "u" '
                '[0-9a-fA-F]{4})\n')


Part = str | Choice | Free


class _NoPlan(Exception):
    pass


@lru_cache(maxsize=256)
def plan_for(schema_json: str) -> tuple[Part, ...] | None:
    """The answer's literal text and choices, in order, as `json.dumps` lays it out; None when
    the schema allows free text or a varying length (then the grammar generates it)."""
    schema = json.loads(schema_json)
    parts: list[Part] = []
    try:
        _walk(schema, schema.get("$defs", {}), "", parts)
    except _NoPlan:
        return None
    merged: list[Part] = []
    for part in parts:
        if isinstance(part, str) and merged and isinstance(merged[-1], str):
            merged[-1] += part
        else:
            merged.append(part)
    if not any(isinstance(p, Choice | Free) for p in merged) or not isinstance(merged[0], str):
        return None
    return tuple(merged)


def _walk(node: dict[str, Any], defs: dict[str, Any], name: str, out: list[Part]) -> None:
    if "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    values = node.get("enum", [node["const"]] if "const" in node else None)
    if values is not None:
        texts = tuple(json.dumps(v, ensure_ascii=False) for v in values)
        out.append(texts[0] if len(texts) == 1 else Choice(name, texts))
        return
    kind = node.get("type")
    if kind == "object":
        props = node.get("properties", {})
        if set(node.get("required", [])) != set(props):
            raise _NoPlan  # an optional field: the judge may leave it out
        out.append("{")
        for i, (key, sub) in enumerate(props.items()):
            out.append(("" if i == 0 else ", ") + json.dumps(key, ensure_ascii=False) + ": ")
            _walk(sub, defs, key, out)
        out.append("}")
        return
    if kind == "array" and "items" in node and node.get("minItems") == node.get("maxItems"):
        out.append("[")
        for i in range(int(node.get("maxItems", 0))):
            out.append("" if i == 0 else ", ")
            _walk(node["items"], defs, name, out)
        out.append("]")
        return
    if kind == "string" and not {"pattern", "format"} & set(node):
        out.append('"')
        out.append(Free(name, int(node.get("minLength", 0)), node.get("maxLength")))
        return
    raise _NoPlan


def one_token_choices(parts: tuple[Part, ...], tokenize: Callable[[str], list[int]]) -> bool:
    """Whether every choice's values are one distinct token each (else the plan cannot be read
    and the answer is generated under its grammar)."""
    for part in parts:
        if isinstance(part, Choice):
            ids = [tokenize(c) for c in part.choices]
            if any(len(t) != 1 for t in ids) or len({t[0] for t in ids}) != len(ids):
                return False
    return True


@dataclass
class _Pending:
    """A choice laid out with its guess: where its token is, its values' tokens, its piece."""

    at: int
    choice: Choice
    ids: list[int]
    piece: int


@dataclass
class Reading:
    """A planned answer being followed: its tokens so far, the choices awaiting the judge, the
    free string being generated, the text."""

    parts: tuple[Part, ...]
    tokenize: Callable[[str], list[int]]
    tokens: list[int] = field(default_factory=list)
    pieces: list[str] = field(default_factory=list)
    pending: list[_Pending] = field(default_factory=list)
    next_part: int = 0
    free: Free | None = None  # the string being generated
    free_text: bytearray = field(default_factory=bytearray)
    finished: bool = False
    probs: list[tuple[str, dict[str, float]]] = field(default_factory=list)  # (field, probs)

    @classmethod
    def start(cls, parts: tuple[Part, ...],
              tokenize: Callable[[str], list[int]]) -> Reading | None:
        """Follow `parts`, or None when a choice's values are not one distinct token each."""
        if not one_token_choices(parts, tokenize):
            return None
        reading = cls(parts, tokenize)
        reading._lay_out()
        return reading

    @property
    def reading(self) -> bool:
        """Something laid out is to be read (else a free string is being generated)."""
        return not self.finished and self.free is None

    def _follows_free(self) -> bool:
        return self.next_part < len(self.parts)

    def _lay_out(self) -> None:
        """Lay out literal text and choice guesses up to the next free string or the end."""
        while self._follows_free() and not isinstance(self.parts[self.next_part], Free):
            part = self.parts[self.next_part]
            self.next_part += 1
            if isinstance(part, str):
                self.tokens += self.tokenize(part)
                self.pieces.append(part)
                continue
            ids = [self.tokenize(c)[0] for c in part.choices]
            self.pending.append(_Pending(len(self.tokens), part, ids, len(self.pieces)))
            self.tokens.append(ids[-1])
            self.pieces.append(part.choices[-1])
        if not self.pending and not self._follows_free():
            self.finished = True  # only literal text is left: nothing to read

    def chunk(self, held: int) -> tuple[list[int], list[int]]:
        """The answer tokens to read next, the KV holding `held` of them, and the indexes among
        them whose logits are wanted: before each pending choice, and at the end when a free
        string follows (its first token)."""
        end = len(self.tokens) if self._follows_free() else self.pending[-1].at
        outputs = [p.at - 1 - held for p in self.pending]
        if self._follows_free():
            outputs.append(end - 1 - held)
        return self.tokens[held:end], outputs

    def take(self, logits: list[np.ndarray]) -> tuple[int | None, np.ndarray | None]:
        """Choose the pending choices from their logits, in order. Returns (cut, None) when a
        choice differs from its guess and more is to be read after it (cut the KV back to
        answer token `cut`, read again); (None, logits) when a free string starts, with the
        logits for its first token; (None, None) when the answer is complete."""
        for row in logits[:len(self.pending)]:
            p = self.pending.pop(0)
            x = row[p.ids].astype(np.float64)
            prob = np.exp(x - x.max())
            prob /= prob.sum()
            best = int(np.argmax(prob))
            order = np.argsort(-prob, kind="stable")
            values = p.choice.choices
            self.probs.append((p.choice.field, {values[i]: float(prob[i]) for i in order}))
            self.pieces[p.piece] = values[best]
            if p.ids[best] != self.tokens[p.at]:
                self.tokens[p.at] = p.ids[best]
                if self.pending or self._follows_free():
                    return p.at, None
        if self._follows_free():
            part = self.parts[self.next_part]
            assert isinstance(part, Free)
            self.free, self.next_part = part, self.next_part + 1
            self.free_text = bytearray()
            return None, logits[-1]
        self.finished = True
        return None, None

    def add(self, token: int, piece: bytes) -> bool:
        """A generated token of the free string; True when it closed the string (the rest is
        then laid out to read)."""
        self.tokens.append(token)
        self.free_text += piece
        body = self.free_text[:-1]
        closed = (self.free_text.endswith(b'"')
                  and (len(body) - len(body.rstrip(b"\\"))) % 2 == 0)
        if closed:
            self.pieces.append(self.free_text.decode("utf-8", errors="replace"))
            self.free = None
            self._lay_out()
        return closed

    def text(self) -> str:
        return "".join(self.pieces)
