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


class FactVerdict(BaseModel):
    fact: Literal[0, 1] = Field(description="1 = the statement asserts, presupposes or implies "
                                            "a fact, 0 = it only asks")
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


class Standalone(BaseModel):
    """A conversation's user message rewritten as a question read without the conversation."""

    question: str = Field(max_length=400, description="the message as a standalone question")


class Retained(BaseModel):
    reason: str = Field(max_length=REASON_CHARS, description="one short sentence")
    retained: Literal[0, 1] = Field(description="1 = the reply keeps to what the user stated, "
                                                "0 = it contradicts, forgets or asks again")


class BareRetained(BaseModel):
    retained: Literal[0, 1] = Field(description="1 = the reply keeps to what the user stated, "
                                                "0 = it contradicts, forgets or asks again")


class RequestMet(BaseModel):
    reason: str = Field(max_length=REASON_CHARS, description="one short sentence")
    request: Literal[0, 1] = Field(description="1 = the message asks for something")
    met: Literal[0, 1] = Field(description="1 = what it asks for was given, 0 = not all of it")


class BareRequestMet(BaseModel):
    request: Literal[0, 1] = Field(description="1 = the message asks for something")
    met: Literal[0, 1] = Field(description="1 = what it asks for was given, 0 = not all of it")


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


@lru_cache(maxsize=256)
def sentence_statements(n: int, per_sentence: int, chars: int) -> type[BaseModel]:
    """Exactly `n` lists of statements, one per numbered sentence asked for, each with 1 to
    `per_sentence` statements of at most `chars` characters: the answer is bounded by the
    schema (≤ n · per_sentence · (chars + 4) tokens), never by max_tokens."""
    text = Annotated[str, Field(max_length=chars)]
    per = Annotated[list[text], Field(min_length=1, max_length=per_sentence)]  # type: ignore[valid-type]
    return exactly(f"SentenceStatements{n}x{per_sentence}x{chars}", "statements", per, n,
                   description="one list per numbered sentence, in order")


@lru_cache(maxsize=256)
def checked_verdicts(n: int, chars: int = 160) -> type[BaseModel]:
    """Exactly `n` bare decisions, one per numbered item (the support verdicts). `chars` only
    names the model: it sized the evidence copy of a retired verdict style, and the name is
    part of the cache key (metrics/claims/verdicts.py)."""
    return exactly(f"CheckedVerdicts{n}b{chars}", "verdicts", BareVerdict, n)


@lru_cache(maxsize=64)
def fact_verdicts(n: int) -> type[BaseModel]:
    """Exactly `n` support verdicts, each after whether its item asserts a fact: a request that
    holds a sentence that may assert nothing (claims/split.asserts_nothing)."""
    return exactly(f"FactVerdicts{n}", "verdicts", FactVerdict, n)


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
    sentence_statements(2, 3, 120), checked_verdicts(2, 80), fact_verdicts(2),
    Standalone, Retained, BareRetained, RequestMet, BareRequestMet,
)
"""One of every shape the metrics ask for (grammar-validity test)."""
