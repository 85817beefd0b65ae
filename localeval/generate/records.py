"""The typed records between `generate`'s stages: what one candidate's judge work found (a
single-chunk draft and its checks, `Asked`; a pair's, `PairAsked`), read by assemble and kept
in the work file (`line`, `parse`: a JSON object per line, fields left out when None)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class Draft(BaseModel):
    """The judge's drafts of one sentence, tidied (drafting.draft_single), and after a short
    form of the document's name was written in full or a question renamed."""

    subject: str = ""
    question: str = ""
    answer: str = ""
    casual: str = ""
    missing: str = ""
    unanswerable: str = ""


class Support(BaseModel):
    """faithfulness(answer | texts): its score (1.0: every claim supported at τ; None:
    unscored), why unscored, its details."""

    score: int | float | None = None
    reason: str | None = None
    details: dict[str, Any] = Field(default_factory=dict)


class Covered(BaseModel):
    """answer_relevance's parts of a question and P(the answer gives it) of each (`p`: the
    smallest); each part {"part", "p_answered", ...} as answer_relevance gives it."""

    p: int | float | None = None
    parts: list[dict[str, Any]] = Field(default_factory=list)


class Attempted(BaseModel):
    """The judge's own answer to an "unanswerable" question from its nearest chunks, and
    whether it answers it."""

    answer: str = ""
    nearest: list[str] = Field(default_factory=list)
    answers: bool = False


class Unanswerable(BaseModel):
    """Whether the corpus answers a draft's "unanswerable" question: a sentence stating it
    (`stated`), else rerank_relevancy's best rating of its nearest chunks (`score`, `details`,
    `nearest`), else the judge's attempt; `error`: a judge error in these checks."""

    score: int | float | None = None
    reason: str | None = None
    details: dict[str, Any] | None = None
    stated: str | None = None
    nearest: list[str] | None = None
    attempt: Attempted | None = None
    error: str | None = None


class Verified(BaseModel):
    """The judge's blind answer to a question from some chunks (`nearest`: the corpus's top
    by BM25, or a bridge's chunks) and whether it gives the reference answer's answer
    (`agrees`, the judge's yes/no; False when the answer declines: `declined`)."""

    answer: str = ""
    nearest: list[str] = Field(default_factory=list)
    declined: bool = False
    agrees: bool = False
    unlinked: bool = False
    """(A bridge's second chunk alone) it never writes the subject its clue names, so it cannot
    tell who or what the question means: not asked, and it agrees with nothing."""


class Asked(BaseModel):
    """One single-chunk task: its draft (None: the judge gave none, `error`), the fields a
    short form was written in full in (`named`) or the judge renamed (`renamed`), the answer's
    support by its chunk, its coverage of the question, and its unanswerable question's check."""

    task: str
    error: str | None = None
    named: list[str] | None = None
    renamed: list[str] | None = None
    draft: Draft | None = None
    support: Support | None = None
    answered: Covered | None = None
    verified: Verified | None = None
    unanswerable: Unanswerable | None = None

    def line(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class PairAsked(BaseModel):
    """One pair task: the single-chunk task asked of each chunk (`parts`), each answer's
    support by the other chunk (`other_chunk`), a judge error."""

    task: str
    parts: list[Asked] = Field(default_factory=list)
    other_chunk: list[int | float | None] | None = None
    error: str | None = None

    def line(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


class BridgeAsked(BaseModel):
    """One bridge task: the entity chunk A names and chunk B is about, the judge's draft
    (clue, question, answer), the blind answers from both chunks (`both`) and from each alone
    (`alone`: A, then B; stopped at the first that answers), a judge error."""

    task: str
    entity: str = ""
    subject: str = ""
    """What the first chunk's document is about (picking.entity_of), which the clue writes."""
    role: str = ""
    """The entity's role to the subject, as the judge wrote it ("director")."""
    clue: str = ""
    """The role and the subject ("the director of Heat"), "" when the role is unusable."""
    asked: str = ""
    """The question as the judge wrote it, naming the entity (`question` writes the clue)."""
    question: str = ""
    answer: str = ""
    both: Verified | None = None
    alone: list[Verified] = Field(default_factory=list)
    error: str | None = None

    def line(self) -> dict[str, Any]:
        return self.model_dump(exclude_none=True)


Result = Asked | PairAsked | BridgeAsked


def parse(item: dict[str, Any] | Result) -> Result:
    """A work file's line (or a test's dict) as its record: a pair's task is "pair:…", a
    bridge's "bridge:…"."""
    if isinstance(item, BaseModel):
        return item
    task = str(item.get("task", ""))
    kind = PairAsked if task.startswith("pair:") else BridgeAsked \
        if task.startswith("bridge:") else Asked
    return kind.model_validate(item)
