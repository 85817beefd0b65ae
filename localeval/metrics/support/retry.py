"""A judge request that failed or looped, asked once more in two halves.

A small judge sometimes runs to max_tokens, writes an answer its schema rejects, or loops (the
same n-gram over and over). Such a request over several items is asked again split in two, once;
the retries are counted and reported (`judge_retries`), never hidden.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from typing import TypeVar

from localeval.errors import JudgeError, PromptTooLong
from localeval.text import has_cjk

T = TypeVar("T")
R = TypeVar("R")


def degenerate(texts: Sequence[str], *, same_texts: bool = True) -> bool:
    """The same word 4-gram (CJK: 8 characters) three times in one text, or (`same_texts`) one
    text three times: the signature of a small model looping."""
    if same_texts and any(n >= 3 for n in Counter(t.strip() for t in texts
                                                   if t.strip()).values()):
        return True
    for text in texts:
        units: list[str] = list(text) if has_cjk(text) else text.casefold().split()
        n = 8 if has_cjk(text) else 4
        grams = Counter(tuple(units[i:i + n]) for i in range(len(units) - n + 1))
        if grams and max(grams.values()) >= 3:
            return True
    return False


async def retry_split(items: list[T], ask: Callable[[list[T]], Awaitable[list[R]]],
                      bad: Callable[[list[R]], bool] | None = None) -> tuple[list[R], int]:
    """`ask(items)`; if it fails (not for length of prompt) or its answer is `bad`, ask once
    more in two halves. Returns the answers and the number of retried requests (0 or 1)."""
    try:
        answer = await ask(items)
        if bad is None or not bad(answer) or len(items) < 2:
            return answer, 0
    except PromptTooLong:
        raise
    except JudgeError:
        if len(items) < 2:
            raise
    half = len(items) // 2
    return [*(await ask(items[:half])), *(await ask(items[half:]))], 1
