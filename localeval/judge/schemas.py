"""Pydantic output models of the judge. Each one's JSON schema becomes a llama.cpp grammar.

Keep them small: the grammar forces the shape, the field descriptions document it. Lists that
answer numbered items (verdicts, ratings, generated questions) are built per request with exactly
one entry per item, so the judge refers to items by position and never copies them back. The
`explain` flavour puts a short reason *before* each decision (the model reasons, then decides);
without it only the decision is generated (fewer tokens).
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, create_model

MAX_STATEMENTS = 24
MAX_ENTITIES = 30
REASON_CHARS = 200


class Statements(BaseModel):
    """Atomic, self-contained statements (no pronouns) that a text makes."""

    statements: list[str] = Field(max_length=MAX_STATEMENTS,
                                  description="one claim each, pronouns replaced by names")


class Entities(BaseModel):
    """Named entities of a text: people, places, organisations, works, dates, numbers."""

    entities: list[str] = Field(max_length=MAX_ENTITIES,
                                description="each entity once, written as in the text")


class Verdict(BaseModel):
    reason: str = Field(max_length=REASON_CHARS, description="one short sentence")
    verdict: Literal[0, 1] = Field(description="1 = yes (supported / useful), 0 = no")


class BareVerdict(BaseModel):
    verdict: Literal[0, 1] = Field(description="1 = yes (supported / useful), 0 = no")


class Rating(BaseModel):
    reason: str = Field(max_length=REASON_CHARS, description="one short sentence")
    rating: Literal[0, 1, 2, 3] = Field(description="0 irrelevant … 3 answers the question")


class BareRating(BaseModel):
    rating: Literal[0, 1, 2, 3] = Field(description="0 irrelevant … 3 answers the question")


class GeneratedQuestion(BaseModel):
    question: str = Field(max_length=300, description="a question the answer responds to")
    reason: str = Field(max_length=REASON_CHARS, description="is the answer clear and direct?")
    clear: Literal[0, 1] = Field(description="1 = the answer answers it clearly and directly, "
                                             "0 = evasive, vague or non-committal")


class BareGeneratedQuestion(BaseModel):
    question: str = Field(max_length=300, description="a question the answer responds to")
    clear: Literal[0, 1] = Field(description="1 = the answer answers it clearly and directly, "
                                             "0 = evasive, vague or non-committal")


def exactly(name: str, field: str, item: Any, n: int, **field_options: Any) -> type[BaseModel]:
    """A model `name` whose one field `field` lists exactly `n` `item`s (one per numbered item
    asked for). The name enters the schema, hence the cache key: a factory keeps its names."""
    return create_model(
        name,
        **{field: (list[item], Field(min_length=n, max_length=n, **field_options))},  # type: ignore[valid-type]
    )


@lru_cache(maxsize=64)
def statements_up_to(n: int) -> type[BaseModel]:
    """Statements, at most `n` of them (a bound set from the text's length, so that a short
    answer is not padded with invented claims)."""
    n = max(1, min(n, MAX_STATEMENTS))
    return create_model(
        f"Statements{n}",
        statements=(list[str], Field(max_length=n,
                                     description="one claim each, pronouns replaced by names")),
    )


VerdictStyle = Literal["evidence", "reason", "bare", "focused"]
"""What the judge writes before each verdict: a copy of the material's sentence that bears on
the item (checked mechanically, see metrics/support/evidence.py), a short reason, or nothing
("bare"; "focused" is bare with the material's closest sentence shown under each item)."""


@lru_cache(maxsize=256)
def sentence_statements(n: int, per_sentence: int, chars: int) -> type[BaseModel]:
    """Exactly `n` lists of statements, one per numbered sentence asked for, each with 1 to
    `per_sentence` statements of at most `chars` characters: the answer is bounded by the
    schema (≤ n · per_sentence · (chars + 4) tokens), never by max_tokens."""
    text = Annotated[str, Field(max_length=chars)]
    per = Annotated[list[text], Field(min_length=1, max_length=per_sentence)]  # type: ignore[valid-type]
    return exactly(f"SentenceStatements{n}x{per_sentence}x{chars}", "statements", per, n,
                   description="one list per numbered sentence, in order")


def _evidence_item(chars: int) -> type[BaseModel]:
    return create_model(
        f"EvidenceVerdict{chars}",
        evidence=(str, Field(max_length=chars, description="the material's sentence copied "
                                                           'word for word, or "none"')),
        verdict=(Literal[0, 1], Field(description="1 = the evidence states it, 0 = no")),
    )


@lru_cache(maxsize=256)
def checked_verdict(style: VerdictStyle, chars: int = 160) -> type[BaseModel]:
    """One decision, preceded by evidence (a copy of at most `chars` characters), a reason, or
    nothing."""
    if style == "evidence":
        return _evidence_item(chars)
    return Verdict if style == "reason" else BareVerdict  # bare, focused


@lru_cache(maxsize=256)
def checked_verdicts(n: int, style: VerdictStyle, chars: int = 160) -> type[BaseModel]:
    """Exactly `n` decisions, one per numbered item, each as `checked_verdict`."""
    return exactly(f"CheckedVerdicts{n}{style[0]}{chars}", "verdicts",
                   checked_verdict(style, chars), n)


@lru_cache(maxsize=16)
def choice(n: int) -> type[BaseModel]:
    """The number (1..n) of the one version, among `n` numbered versions of a claim, that the
    material states (metrics/support/contrast.py)."""
    return create_model(
        f"Choice{n}",
        choice=(Literal[tuple(range(1, n + 1))],  # type: ignore[valid-type]
                Field(description="the number of the version the material states")),
    )


def item_tokens(style: VerdictStyle, chars: int) -> int:
    """Upper bound on the tokens of one verdict item (a token holds at least one character)."""
    return {"evidence": chars, "reason": REASON_CHARS}.get(style, 0) + 16


def verdict(explain: bool = True) -> type[BaseModel]:
    """One yes/no decision (with a reason first when `explain`)."""
    return Verdict if explain else BareVerdict


def rating(explain: bool = True) -> type[BaseModel]:
    """One 0–3 relevance rating (with a reason first when `explain`)."""
    return Rating if explain else BareRating


@lru_cache(maxsize=256)
def verdict_list(n: int, explain: bool = True) -> type[BaseModel]:
    """A model with exactly `n` verdicts, one per numbered statement, in order."""
    item = Verdict if explain else BareVerdict
    return exactly(f"Verdicts{n}{'R' if explain else ''}", "verdicts", item, n)


@lru_cache(maxsize=32)
def question_list(n: int, explain: bool = True) -> type[BaseModel]:
    """A model with exactly `n` generated questions, each with its clear-answer flag."""
    item = GeneratedQuestion if explain else BareGeneratedQuestion
    return exactly(f"Questions{n}{'R' if explain else ''}", "questions", item, n)


def schema_json(model: type[BaseModel]) -> str:
    """The canonical JSON schema text of a model (part of the cache key)."""
    return json.dumps(model.model_json_schema(), sort_keys=True, ensure_ascii=False)


ALL_SCHEMAS: tuple[type[BaseModel], ...] = (
    Statements, statements_up_to(2), Entities, Verdict, BareVerdict, Rating, BareRating,
    verdict_list(1), verdict_list(3, False), question_list(3), question_list(2, False),
    sentence_statements(2, 3, 120), checked_verdicts(2, "evidence", 80),
    checked_verdicts(1, "reason"), checked_verdict("evidence", 160), choice(4),
)
"""One of every shape the metrics ask for (grammar-validity test)."""
