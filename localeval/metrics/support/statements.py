"""Statements anchored to a text's sentences, bounded by construction.

The text (an answer or a ground truth) is split deterministically (text.split_sentences); the
prompt shows every sentence numbered, and each request asks for the statements of a group of
consecutive sentences with an exact-length schema: one list per sentence (1..3 statements, each
at most a few characters longer than its sentence). So no sentence is dropped, no statement is
invented beside the sentences, and the longest possible answer of a request fits max_tokens:
groups are formed so that n · per_sentence · (chars + 4) + 16 ≤ max_tokens (a token holds at
least one character). A request that still fails (max_tokens, an invalid answer) or
degenerates (the same n-gram over and over) is retried once split smaller; retries are counted.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import TypeVar

from localeval.errors import JudgeError, PromptTooLong
from localeval.judge.schemas import sentence_statements
from localeval.metrics.base import MetricContext
from localeval.text import json_safe, match_key, split_sentences, word_count

STEP = "faithfulness_statements"
PER_SENTENCE_MAX = 3
WORDS_PER_STATEMENT = 6
MIN_CHARS, MAX_CHARS, EXTRA_CHARS = 60, 240, 30
OVERHEAD_TOKENS = 16
_WORDY = re.compile(r"[^\W_]")
_CJK = re.compile(r"[\u3400-\u9fff]")

T = TypeVar("T")
R = TypeVar("R")


@dataclass
class Anchored:
    """One statement and the numbered sentence (1-based) it came from."""

    statement: str
    sentence: int
    extracted: str | None = None  # the judge's statement, when a check replaced it


@dataclass
class AnchoredStatements:
    """A text's sentences and the statements anchored to them (not the judge's answer model
    judge.schemas.Statements)."""

    sentences: list[str]
    items: list[Anchored]
    retries: int = 0

    @property
    def texts(self) -> list[str]:
        return [a.statement for a in self.items]


def per_sentence(sentence: str) -> int:
    """Statements allowed for one sentence: one per ~6 words, 1..3."""
    return max(1, min(PER_SENTENCE_MAX, math.ceil(word_count(sentence) / WORDS_PER_STATEMENT)))


def chars_for(sentence: str, question: str = "") -> int:
    """Longest statement allowed: the sentence plus room for the names that replace its
    pronouns and, for a short answer, the question's words that make it a full sentence."""
    return max(MIN_CHARS, min(MAX_CHARS, len(sentence) + len(question) + EXTRA_CHARS))


def _shape(group: Sequence[str], max_tokens: int, question: str = "") -> tuple[int, int]:
    k = max(per_sentence(s) for s in group)
    chars = max(chars_for(s, question) for s in group)
    room = (max_tokens - OVERHEAD_TOKENS) // (len(group) * k) - 4
    return k, max(8, min(chars, room))


def worst_tokens(group: Sequence[str], k: int, chars: int) -> int:
    return len(group) * k * (chars + 4) + OVERHEAD_TOKENS


def groups(sentences: list[str], max_tokens: int,
           question: str = "") -> list[tuple[int, int]]:
    """Consecutive [start, end) runs of sentences whose worst-case answer fits max_tokens."""
    out: list[tuple[int, int]] = []
    start = 0
    for end in range(1, len(sentences) + 1):
        run = sentences[start:end]
        k = max(per_sentence(s) for s in run)
        chars = max(chars_for(s, question) for s in run)
        if end - start > 1 and worst_tokens(run, k, chars) > max_tokens:
            out.append((start, end - 1))
            start = end - 1
    if sentences:
        out.append((start, len(sentences)))
    return out


def degenerate(texts: Sequence[str], *, same_texts: bool = True) -> bool:
    """The same word 4-gram (CJK: 8 characters) three times in one text, or (`same_texts`) one
    text three times: the signature of a small model looping."""
    if same_texts and any(n >= 3 for n in Counter(t.strip() for t in texts
                                                   if t.strip()).values()):
        return True
    for text in texts:
        units: list[str] = list(text) if _CJK.search(text) else text.casefold().split()
        n = 8 if _CJK.search(text) else 4
        grams = Counter(tuple(units[i:i + n]) for i in range(len(units) - n + 1))
        if grams and max(grams.values()) >= 3:
            return True
    return False


async def retry_split(items: list[T], ask: Callable[[list[T]], Awaitable[list[R]]],
                      bad: Callable[[list[R]], bool]) -> tuple[list[R], int]:
    """`ask(items)`; if it fails (not for length of prompt) or its answer is `bad`, ask once
    more in two halves. Returns the answers and the number of retried requests (0 or 1)."""
    try:
        answer = await ask(items)
        if not bad(answer) or len(items) < 2:
            return answer, 0
    except PromptTooLong:
        raise
    except JudgeError:
        if len(items) < 2:
            raise
    half = len(items) // 2
    return [*(await ask(items[:half])), *(await ask(items[half:]))], 1


def _numbers(indices: list[int]) -> list[int] | None:
    """The 1-based numbers of a group that skips some, else None (the prompt says "i to j")."""
    consecutive = indices == list(range(indices[0], indices[-1] + 1))
    return None if consecutive else [i + 1 for i in indices]


async def anchored_statements(ctx: MetricContext, text: str, question: str | None,
                              skip: Collection[int] = ()) -> AnchoredStatements:
    """The statements of every sentence of `text` but those (0-based) in `skip`, in order. The
    prompt still shows every sentence, for the names that pronouns stand for; a group of the
    others may skip numbers ("sentences 2, 4 and 6"), so skipped sentences cost no extra request.
    Shared by faithfulness, context_recall and answer_correctness (identical requests are asked
    once)."""
    sentences = split_sentences(text)
    result = AnchoredStatements(sentences=sentences, items=[])
    max_tokens = ctx.settings.max_tokens

    async def ask(indices: list[int]) -> list[list[str]]:
        group = [sentences[i] for i in indices]
        k, chars = _shape(group, max_tokens, question or "")
        found = await ctx.ask(STEP, sentence_statements(len(group), k, chars),
                              question=question or "",
                              sentences=[json_safe(s) for s in sentences],
                              first=indices[0] + 1, last=indices[-1] + 1, count=len(indices),
                              numbers=_numbers(indices))
        return [list(s) for s in found.statements]  # type: ignore[attr-defined]

    def bad(answer: list[list[str]]) -> bool:
        return degenerate([s for per in answer for s in per])

    seen: set[str] = set()
    asked = [i for i in range(len(sentences)) if i not in skip]
    for start, end in groups([sentences[i] for i in asked], max_tokens, question or ""):
        answer, retried = await retry_split(asked[start:end], ask, bad)
        result.retries += retried
        for index, per in zip(asked[start:end], answer, strict=True):
            number = index + 1
            # a statement already written for an earlier sentence is that sentence's, not this
            kept = [s for s in dict.fromkeys(s.strip() for s in per if _WORDY.search(s))
                    if match_key(s) not in seen]
            if not kept:  # the sentence itself stands for its claim: no sentence is dropped
                kept = [sentences[number - 1]]
            seen.update(match_key(s) for s in kept)
            result.items.extend(Anchored(s, number) for s in kept)
    return result
