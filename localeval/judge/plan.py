"""Answers fixed but for a few choices: read like a prompt, never generated token by token.

The bare verdict lists (`{"verdicts": [{"verdict": 0|1}, …]}` with exactly n items) are fixed
text except for one choice per item. Generating them costs one decode step per key, bracket and
quote; reading them costs one chunk. `plan_for(schema)` turns such a schema into literal text and
*slots* (a field's allowed values, each one token); a schema with any free text (a reason, a
question) has no plan and is generated under its grammar as before.

`Reading` decodes a planned answer: the whole answer up to its last slot, each slot filled with a
guess (its last choice), as one chunk after the prompt, with logits before each slot. At each
slot it takes the choice the judge finds most likely (what greedy generation under the grammar
takes) and records the choices' probabilities; where that differs from the guess, the answer is
cut there and the rest is read again with the judge's choice. The text after the last slot is
never decoded. The chunks follow from the request alone, so an answer does not depend on what
runs beside it, as with generation (docs/engine.md).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Slot:
    """One value the judge chooses: a JSON field's allowed values, as JSON text."""

    field: str
    choices: tuple[str, ...]


Part = str | Slot


class _NoPlan(Exception):
    pass


@lru_cache(maxsize=256)
def plan_for(schema_json: str) -> tuple[Part, ...] | None:
    """The answer's literal text and slots, in order, as `json.dumps` lays it out; None when
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
    if not any(isinstance(p, Slot) for p in merged) or not isinstance(merged[0], str):
        return None
    return tuple(merged)


def _walk(node: dict[str, Any], defs: dict[str, Any], name: str, out: list[Part]) -> None:
    if "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[-1]]
    values = node.get("enum", [node["const"]] if "const" in node else None)
    if values is not None:
        texts = tuple(json.dumps(v, ensure_ascii=False) for v in values)
        out.append(texts[0] if len(texts) == 1 else Slot(name, texts))
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
    raise _NoPlan


@dataclass
class Reading:
    """A planned answer being read: its tokens, where its slots are, what was chosen."""

    parts: tuple[Part, ...]
    tokens: list[int]
    slot_at: list[int]  # index in `tokens` of each slot's token
    choice_tokens: list[list[int]]  # per slot: the token of each choice
    next_slot: int = 0
    decoded: int = 0  # answer tokens the KV holds
    picks: list[str] = field(default_factory=list)
    probs: list[tuple[str, dict[str, float]]] = field(default_factory=list)  # (field, probs)

    @classmethod
    def start(cls, parts: tuple[Part, ...],
              tokenize: Callable[[str], list[int]]) -> Reading | None:
        """The answer with each slot's last choice, or None when a choice is not one token."""
        tokens: list[int] = []
        slot_at: list[int] = []
        choice_tokens: list[list[int]] = []
        for part in parts:
            if isinstance(part, str):
                tokens += tokenize(part)
                continue
            ids = [tokenize(c) for c in part.choices]
            if any(len(t) != 1 for t in ids) or len({t[0] for t in ids}) != len(ids):
                return None
            choice_tokens.append([t[0] for t in ids])
            slot_at.append(len(tokens))
            tokens.append(ids[-1][0])
        if not slot_at or slot_at[0] == 0:
            return None
        return cls(parts, tokens, slot_at, choice_tokens)

    @property
    def done(self) -> bool:
        return self.next_slot >= len(self.slot_at)

    def chunk(self) -> tuple[list[int], list[int]]:
        """The answer tokens to decode next (from `decoded` up to the last slot) and the
        indexes among them whose logits choose the remaining slots."""
        end = self.slot_at[-1]
        outputs = [s - 1 - self.decoded for s in self.slot_at[self.next_slot:]]
        return self.tokens[self.decoded:end], outputs

    def take(self, logits: list[np.ndarray]) -> int | None:
        """Choose the remaining slots from their logits, in order. Returns the answer index to
        cut the KV back to when a choice differs from the guess and later slots remain (their
        logits were read after the guess), else None."""
        self.decoded = self.slot_at[-1]
        for row in logits:
            k = self.next_slot
            at, ids = self.slot_at[k], self.choice_tokens[k]
            x = row[ids].astype(np.float64)
            p = np.exp(x - x.max())
            p /= p.sum()
            best = int(np.argmax(p))
            slot = self._slot(k)
            order = np.argsort(-p, kind="stable")
            self.probs.append((slot.field, {slot.choices[i]: float(p[i]) for i in order}))
            self.picks.append(slot.choices[best])
            self.next_slot += 1
            if ids[best] != self.tokens[at]:
                self.tokens[at] = ids[best]
                if not self.done:
                    self.decoded = at
                    return at
        return None

    def text(self) -> str:
        picks = iter(self.picks)
        return "".join(p if isinstance(p, str) else next(picks) for p in self.parts)

    def _slot(self, k: int) -> Slot:
        return [p for p in self.parts if isinstance(p, Slot)][k]
