"""Pydantic output models of the judge. Each one's JSON schema becomes a llama.cpp grammar.

Keep them small: the grammar forces the shape, the field descriptions document it. Verdict
lists are built per request with exactly one item per numbered statement, so the judge refers
to statements by position and never copies them back.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Literal

from pydantic import BaseModel, Field, create_model

MAX_STATEMENTS = 24


class Statements(BaseModel):
    """Atomic, self-contained statements (no pronouns) that a text makes."""

    statements: list[str] = Field(max_length=MAX_STATEMENTS,
                                  description="one claim each, pronouns replaced by names")


class Verdict(BaseModel):
    reason: str = Field(max_length=200, description="one short sentence")
    verdict: Literal[0, 1] = Field(description="1 = supported by the context, 0 = not")


class BareVerdict(BaseModel):
    verdict: Literal[0, 1]


@lru_cache(maxsize=256)
def verdict_list(n: int, explain: bool = True) -> type[BaseModel]:
    """A model with exactly `n` verdicts, one per numbered statement, in order."""
    item = Verdict if explain else BareVerdict
    return create_model(
        f"Verdicts{n}{'R' if explain else ''}",
        verdicts=(list[item], Field(min_length=n, max_length=n)),  # type: ignore[valid-type]
    )


def schema_json(model: type[BaseModel]) -> str:
    """The canonical JSON schema text of a model (part of the cache key)."""
    return json.dumps(model.model_json_schema(), sort_keys=True, ensure_ascii=False)
