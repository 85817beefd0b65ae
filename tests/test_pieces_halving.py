"""A piece sized by the character estimate that still does not fit is asked again in halves
(it used to call the material's variable name as a function)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from localeval.errors import PromptTooLong
from localeval.judge.schemas import Entities
from localeval.metrics.base import MetricContext
from localeval.metrics.claims.evidence import ask_pieces

STEP = "context_entities_recall_entities"


class _Ctx:
    """Refuses any prompt whose material holds more than `limit` characters."""

    language = "en"
    judge = None
    settings = SimpleNamespace(max_tokens=64, explain=False)
    steps = None
    messages = MetricContext.messages  # the step's prompt, as the real context renders it

    def __init__(self, limit: int) -> None:
        self.limit, self.asked = limit, []

    async def ask_probs(self, step: str, schema: type, probe: list[str], **variables: Any
                        ) -> tuple[Any, list[Any]]:
        size = sum(map(len, variables["text"]))
        if size > self.limit:
            raise PromptTooLong(max(1, size // 8), self.limit, 0)  # a wrong size: too few
        self.asked.append(variables["text"])
        return schema(entities=[]), []


def test_a_piece_that_does_not_fit_after_all_is_halved() -> None:
    text = " ".join(f"Sentence number {i} names Ada Lovelace in London." for i in range(40))
    ctx = _Ctx(limit=300)
    answers = asyncio.run(ask_pieces(ctx, STEP, Entities, split="text",  # type: ignore[arg-type]
                                     text=[text]))
    assert len(answers) == len(ctx.asked) > 2
    assert all(sum(map(len, texts)) <= 300 for texts in ctx.asked)
    joined = " ".join(t for texts in ctx.asked for t in texts)
    assert joined.replace(" ", "") == text.replace(" ", "")
