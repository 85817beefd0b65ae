"""Turn finished candidates into rows, in plan order: apply the filters (each candidate is
counted under the first one it fails), drop near-duplicates of kept questions by embedder
cosine, keep at most N per kind. Depends only on the candidates, never on their timing."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from localeval.generate import KINDS
from localeval.generate.answerable import ANSWERABLE_RATING
from localeval.generate.chunking import Chunk
from localeval.generate.drafting import ANSWER_CHARS, PAIR_ANSWER_CHARS
from localeval.generate.filters import (
    ANSWERED_P,
    FILTERS,
    adds_answer,
    asked_parts,
    asks_otherwise,
    first_failed,
    question_words,
    restates,
)
from localeval.generate.lang import language, of_chunk
from localeval.generate.records import Asked, Covered, PairAsked, Result, Support, parse
from localeval.generate.store import Row
from localeval.models.embed import EmbeddingStore, store_for
from localeval.text import match_key


@dataclass
class Candidate:
    """A question before the near-duplicate check, or the filter that dropped it."""

    kind: str
    task: str
    row: Row | None
    dropped: str | None = None
    detail: Any = None


@dataclass(frozen=True)
class Dropped:
    """A dropped candidate as the dropped file keeps it: its kind, task, the filter that
    dropped it and why, and its row when it has one."""

    kind: str
    task: str
    dropped: str | None
    detail: Any
    row: Row | None

    def line(self) -> dict[str, Any]:
        return {"kind": self.kind, "task": self.task, "dropped": self.dropped,
                "detail": self.detail,
                **(self.row.model_dump(exclude_none=True) if self.row else {})}


@dataclass
class Assembled:
    rows: list[Row] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)


def casual_form(text: str, key: str, code: str) -> str:
    """A user's typing: no end punctuation, and its language's `casual` (English: lower case
    and one typo, two letters of a long word swapped, the word picked from `key`)."""
    return language(code).casual(text.strip().rstrip("?？.。!！ "), key)


def retype(question: str, key: str, code: str) -> str:
    """A single question as a user would type it, by rule: `casual_form`, then its language's
    `spoken` (Chinese: the spoken words of zh.SPOKEN, or else the particle zh.SPOKEN_END)."""
    return language(code).spoken(casual_form(question, key, code))


def _row(kind: str, rid: str, question: str, answer: str, chunks: list[Chunk],
         **extra: Any) -> Row:
    sources = list(dict.fromkeys(c.source for c in chunks))
    return Row(id=rid, question=question.strip(), ground_truth=answer.strip(),
               reference_contexts=[c.text for c in chunks], expected_ids=[c.id for c in chunks],
               kind=kind, language=chunks[0].language, source=", ".join(sources), **extra)


def _checked(kind: str, task: str, row: Row, support: Support | None,
             terms: set[str], titled: frozenset[str]) -> Candidate:
    cut_at = PAIR_ANSWER_CHARS if kind == "pair" else ANSWER_CHARS
    if failed := first_failed(kind, row.question, row.ground_truth, row.reference_contexts,
                              terms, cut_at, titled):
        return Candidate(kind, task, row, *failed)
    if support is None or support.score != 1.0:
        why = support.reason if support else None
        return Candidate(kind, task, row, "unsupported", why or (support.score if support
                                                                 else None))
    return Candidate(kind, task, row)


def _single(result: Asked, chunk: Chunk, terms: set[str],
            titled: frozenset[str]) -> Candidate:
    """The single-chunk question of a draft (`terms`: its document's subject terms; `titled`:
    its title's words, filters.first_failed)."""
    task = result.task
    draft = result.draft
    if draft is None or result.error:
        return Candidate("single", task, None, "judge_error", _error(result))
    key = task.split(":", 1)[-1]  # the chunk id, and the sentence asked about past the first
    single = _checked("single", task, _row("single", f"single:{key}", draft.question,
                                           draft.answer, [chunk]), result.support,
                      terms, titled)
    if single.dropped is None and not _answers(result.answered, draft.question):
        single.dropped, single.detail = "unanswered", _parts(result.answered)
    return single


def usable_part(result: Asked, chunk: Chunk, terms: set[str],
                titled: frozenset[str] = frozenset()) -> tuple[str, Any] | None:
    """Why a single-chunk draft cannot be a part of a pair (the filter its question fails and
    the detail), or None: it passes every single-chunk filter."""
    single = _single(result, chunk, terms, titled)
    return None if single.dropped is None else (single.dropped, single.detail)


def from_single(result: Asked | dict[str, Any], chunk: Chunk, terms: set[str],
                titled: frozenset[str] = frozenset()) -> list[Candidate]:
    """The single, colloquial and unanswerable candidates of one single-chunk draft (`terms`:
    its document's subject terms; `titled`: its title's words, filters.first_failed)."""
    result = parse(result)
    assert isinstance(result, Asked)
    task, lang = result.task, chunk.language
    key = task.split(":", 1)[-1]  # the chunk id, and the sentence asked about past the first
    draft = result.draft
    if draft is None or result.error:
        return [Candidate(k, task, None, "judge_error", _error(result))
                for k in ("single", "colloquial", "unanswerable")]
    support = result.support
    single = _single(result, chunk, terms, titled)
    casual = casual_form(draft.casual, key, lang)
    colloquial = _checked("colloquial", task, _row(  # checked before its typo
        "colloquial", f"colloquial:{key}", draft.casual, draft.answer, [chunk],
        parent=f"single:{key}"), support, terms, titled)
    if colloquial.row is not None:
        colloquial.row.question = casual
    if colloquial.dropped is None and (told := adds_answer(draft.casual, draft.question,
                                                           draft.answer)):
        colloquial.dropped, colloquial.detail = "answer_in_question", told
    if colloquial.dropped is None and asks_otherwise(draft.casual, draft.question):
        colloquial.dropped, colloquial.detail = "asks_otherwise", sorted(
            question_words(draft.casual) ^ question_words(draft.question))
    if colloquial.dropped is None and single.dropped is not None:
        colloquial.dropped, colloquial.detail = single.dropped, "its single question's reason"
    if colloquial.dropped is None and match_key(casual) == match_key(draft.question):
        colloquial.dropped, colloquial.detail = "duplicate", "the same as its single question"
    if colloquial.dropped is not None and single.dropped is None and single.row is not None:
        # the small judge often writes a statement or a keyword string: the kept single
        # question, retyped by rule, is the same question as a user would type it
        retyped = retype(single.row.question, key, lang)
        if match_key(retyped) != match_key(single.row.question):
            colloquial = Candidate("colloquial", task, single.row.model_copy(update={
                "id": f"colloquial:{key}", "kind": "colloquial", "question": retyped,
                "parent": single.row.id, "retyped": colloquial.dropped}))
    unans = result.unanswerable
    row = Row(id=f"unanswerable:{key}", question=draft.unanswerable.strip(),
              ground_truth=language(lang).no_answer, reference_contexts=[],
              expected_ids=[], kind="unanswerable", language=lang, source=chunk.source,
              topic_ids=[chunk.id])
    if failed := first_failed("unanswerable", row.question, None, [chunk.text], terms,
                              ANSWER_CHARS, titled):
        no_answer = Candidate("unanswerable", task, row, *failed)
    elif restates(row.question, draft.question):
        no_answer = Candidate("unanswerable", task, row, "answerable",
                              "restates the question its chunk answers")
    elif unans is not None and unans.error is not None:
        no_answer = Candidate("unanswerable", task, row, "judge_error", unans.error)
    elif unans is not None and unans.stated is not None:
        no_answer = Candidate("unanswerable", task, row, "answerable", {
            "stated in": unans.stated or "its document: it asks only for its subject"})
    elif unans is None or unans.score is None or unans.score >= ANSWERABLE_RATING:
        no_answer = Candidate("unanswerable", task, row, "answerable",
                              {"rating": unans.score if unans else None,
                               "nearest": unans.nearest if unans else None})
    elif unans.attempt is None or unans.attempt.answers:
        found = unans.attempt
        no_answer = Candidate("unanswerable", task, row, "answerable",
                              {"answered": found.answer if found else None,
                               "nearest": found.nearest if found else None})
    else:
        no_answer = Candidate("unanswerable", task, row)
    return [single, colloquial, no_answer]


def joined(first: str, second: str, code: str, *, question: bool) -> str:
    """Two questions as one ("When did X open, and who designed it?"; "……是多少，以及……？"),
    or two answers one after the other, by the joiner of the language of the chunk (`code`)
    or of the text that follows (lang.of_chunk)."""
    first, second = first.strip(), second.strip()
    if question:
        return of_chunk(code, second).join_questions(first.rstrip("?？ "), second)
    return of_chunk(code, first).join_answers(first, second)


def from_pair(result: PairAsked | dict[str, Any], first: Chunk, second: Chunk, link: str,
              terms: tuple[set[str], set[str]],
              titled: frozenset[str] = frozenset()) -> Candidate:
    """A pair's candidate: the questions of its two chunks (each passing the single-chunk
    filters with its own document's subject terms) joined, their answers one after the other;
    dropped when the two ask the same or one chunk supports both answers."""
    result = parse(result)
    assert isinstance(result, PairAsked)
    task = result.task
    parts = result.parts
    if result.error:
        return Candidate("pair", task, None, "judge_error", result.error)
    for i, (part, chunk, mine) in enumerate(zip(parts, (first, second), terms, strict=False)):
        if why := usable_part(part, chunk, mine, titled):
            asked = part.draft.question if part.draft else None
            return Candidate("pair", task, None, why[0],
                             {"part": i + 1, "question": asked, "detail": why[1]})
    if len(parts) < 2:
        return Candidate("pair", task, None, "judge_error", "no draft")
    (q1, a1), (q2, a2) = ((p.draft.question, p.draft.answer) for p in parts if p.draft)
    lang = first.language
    row = _row("pair", f"pair:{first.id}+{second.id}", joined(q1, q2, lang, question=True),
               joined(a1, a2, lang, question=False), [first, second], link=link,
               parts=[p.task for p in parts])
    if restates(q1, q2) or restates(q2, q1):
        return Candidate("pair", task, row, "one_chunk_suffices", "its two questions ask "
                         "the same")
    if failed := first_failed("pair", row.question, row.ground_truth, row.reference_contexts,
                              terms[0] | terms[1], PAIR_ANSWER_CHARS, titled):
        return Candidate("pair", task, row, *failed)
    other = result.other_chunk
    if other is None or 1.0 in other:
        return Candidate("pair", task, row, "one_chunk_suffices", other)
    return Candidate("pair", task, row)


def _error(result: Result) -> str:
    """A task's judge error, or "no draft"."""
    return result.error if result.error is not None else "no draft"


def _answers(answered: Covered | None, question: str) -> bool:
    """The reference answer gives every part its question asks (P ≥ ANSWERED_P for each of
    filters.asked_parts)."""
    parts = asked_parts(answered.parts if answered is not None else [], question)
    return bool(parts) and min(p["p_answered"] for p in parts) >= ANSWERED_P


def _parts(answered: Covered | None) -> Any:
    return [[p["part"], p["p_answered"]] for p in answered.parts] if answered is not None \
        else None


async def assemble(candidates: Sequence[Candidate], embeddings: EmbeddingStore, n: int,
                   duplicate_cosine: float) -> Assembled:
    """Rows in kind order, then plan order; near-duplicates (cosine ≥ duplicate_cosine to a
    kept question of the same kind and language, or a pair joining a question a kept pair
    joins), colloquial rows whose single question assemble dropped, and those past n per kind
    dropped."""
    out = Assembled()
    for kind in KINDS:
        gone = {d.row.id: d.dropped for d in out.dropped if d.row is not None}
        mine = [c for c in candidates if c.kind == kind]
        if not mine:
            continue
        counts = out.counts[kind] = {"candidates": len(mine), **dict.fromkeys(FILTERS, 0),
                                     "kept": 0, "retyped": 0}
        kept: dict[str, list[np.ndarray]] = {}
        asked: set[str] = set()  # the single drafts a kept pair joins: each in one pair only
        for c in mine:
            if c.dropped is None and c.row is not None:
                if counts["kept"] >= n:
                    c.dropped = "surplus"
                elif used := asked & set(c.row.parts or ()):
                    c.dropped, c.detail = "duplicate", f"a kept pair asks {sorted(used)[0]}"
                elif c.row.parent in gone:
                    c.dropped, c.detail = gone[c.row.parent], (
                        f"its single question {c.row.parent} was dropped")
                else:
                    store = await store_for(embeddings, c.row.language)
                    vec = (await store.vectors([c.row.question]))[0]
                    same = kept.setdefault(c.row.language, [])
                    best = max((float(np.dot(vec, v)) for v in same), default=-1.0)
                    if best >= duplicate_cosine:
                        c.dropped, c.detail = "duplicate", round(best, 3)
                    else:
                        same.append(vec)
                        asked.update(c.row.parts or ())
                        out.rows.append(c.row)
                        counts["kept"] += 1
                        counts["retyped"] += bool(c.row.retyped)
                        continue
            counts[c.dropped or "judge_error"] += 1
            out.dropped.append(Dropped(kind, c.task, c.dropped, c.detail, c.row))
    return out
