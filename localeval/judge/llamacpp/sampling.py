"""Choosing tokens under a grammar, and the probabilities the engine reports.

Greedy by default: the unconstrained argmax is tried first and the grammar is applied to the
whole vocabulary only when it rejects that token (as llama.cpp's common sampler does). The
probabilities are read from the logits before sampling and renormalised over what the grammar
allows.
"""

from __future__ import annotations

import re
from typing import Any, Protocol

import numpy as np

from localeval.errors import JudgeError


class GrammarLike(Protocol):
    def allows(self, token: int) -> bool: ...

    def mask(self, logits: np.ndarray) -> np.ndarray: ...

    def sample(self, logits: np.ndarray, chain: Any) -> int: ...


def pick(logits: np.ndarray, grammar: GrammarLike, chain: Any = None) -> tuple[int, bool]:
    """The next token, and whether the grammar had to be applied to the whole vocabulary."""
    if chain is not None:
        return grammar.sample(logits, chain), True
    token = int(np.argmax(logits))
    if grammar.allows(token):
        return token, False
    masked = grammar.mask(logits)
    token = int(np.argmax(masked))
    if not np.isfinite(masked[token]):
        raise JudgeError("the grammar allows no token (a bug in the schema grammar)")
    return token, True


def log_softmax(logits: np.ndarray) -> np.ndarray:
    x = logits.astype(np.float64)
    finite = np.isfinite(x)
    top = np.max(x[finite])
    out = np.full_like(x, -np.inf)
    out[finite] = x[finite] - top
    out[finite] -= np.log(np.sum(np.exp(out[finite])))
    return out


def allowed_probs(logits: np.ndarray, grammar: GrammarLike, *, top: int = 8,
                  floor: float = 1e-3) -> dict[int, float]:
    """P(token) over the tokens the grammar allows (renormalised): the `top` most likely that
    reach `floor`."""
    logp = log_softmax(grammar.mask(logits))
    order = np.argsort(-logp)[:top]
    return {int(t): float(np.exp(logp[t])) for t in order if np.exp(logp[t]) >= floor}


def choice_probs(logprobs: dict[str, float]) -> dict[str, float]:
    """Total log-probabilities of a few continuations → probabilities summing to 1 over them."""
    values = np.array(list(logprobs.values()), dtype=np.float64)
    values = np.exp(values - values.max())
    values /= values.sum()
    return {k: float(v) for k, v in zip(logprobs, values, strict=True)}


_FIELD_AT_END = re.compile(r'"([^"\\]+)"\s*:\s*$')


def field_before_value(text: str) -> tuple[str, int] | None:
    """The JSON key whose value comes next in `text` (generated so far), and where the key
    starts; None when the text does not end at a key's colon."""
    match = _FIELD_AT_END.search(text[-200:])
    if match is None:
        return None
    return match.group(1), len(text) - len(text[-200:]) + match.start()
