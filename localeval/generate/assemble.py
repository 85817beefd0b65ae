"""Turn finished candidates into rows, in plan order: apply the filters (each candidate is
counted under the first one it fails), drop near-duplicates of kept questions by embedder
cosine, keep at most N per kind. Depends only on the candidates, never on their timing."""

from __future__ import annotations

from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from localeval.generate import KINDS
from localeval.generate.answerable import ANSWERABLE_RATING
from localeval.generate.chunking import Chunk
from localeval.generate.coverage import Doc, quotas
from localeval.generate.drafting import ANSWER_CHARS, PAIR_ANSWER_CHARS
from localeval.generate.filters import (
    ANSWERED_P,
    FILTERS,
    adds_answer,
    asked_parts,
    asks_otherwise,
    changes_words,
    first_failed,
    listed,
    names_entity,
    question_words,
    restates,
)
from localeval.generate.lang import language, of_chunk
from localeval.generate.records import (
    Asked,
    BridgeAsked,
    Covered,
    PairAsked,
    Result,
    Support,
    Verified,
    parse,
)
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
    doc: Doc = ("", "")
    """(source, language) of the document it is counted under (coverage: a pair's or a
    bridge's first chunk)."""


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
    """The kept rows, the dropped candidates, the counts per kind and filter, per document
    and kind what was planned, drafted and kept (`coverage`), and per kind the documents
    kept short of their plan (`short`)."""

    rows: list[Row] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)
    coverage: dict[Doc, dict[str, dict[str, int]]] = field(default_factory=dict)
    short: dict[str, list[Doc]] = field(default_factory=dict)


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
    if single.dropped is None and not gives_every_part(result.answered, draft.question):
        single.dropped, single.detail = "unanswered", _parts(result.answered)
    if single.dropped is None and not (result.verified and result.verified.agrees):
        single.dropped, single.detail = "unverified", _blind(result.verified)
    return single


def _blind(check: Verified | None) -> Any:
    """Why a blind check failed: the judge's answer and the chunks it answered from."""
    if check is None:
        return None
    return {"answer": check.answer, "from": check.nearest,
            "why": "the judge declines" if check.declined else "another answer"}


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
    if colloquial.dropped is None and (other := changes_words(draft.casual, draft.question,
                                                               chunk.text)):
        colloquial.dropped, colloquial.detail = "names_outside", other
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


def bridge_failed(result: BridgeAsked, first: Chunk, second: Chunk, terms: set[str],
                  titled: frozenset[str] = frozenset()) -> tuple[str, Any] | None:
    """The cheap filter a bridge's draft fails, or one_chunk_suffices when its question still
    names the entity (the second chunk alone then answers it), or None. The filters read the
    question as the judge wrote it, naming the entity (`asked`): the clue is A's words, and
    "the base where the squadron is stationed and operates" asks no two things. A draft with
    no clue (its role is no short phrase, or the first document names no subject:
    drafting.clue_of), or whose entity the first chunk writes in a list (its role there fits
    several: `listed`) is loose_clue."""
    if failed := first_failed("bridge", result.asked or result.question, result.answer,
                              [first.text, second.text], terms, ANSWER_CHARS, titled):
        return failed
    if not result.clue:
        return "loose_clue", {"role": result.role, "subject": result.subject}
    if listed(first.text, result.entity):
        return "loose_clue", {"role": result.role, "listed": result.entity}
    if names_entity(result.question, result.entity):
        return "one_chunk_suffices", f"it names {result.entity}"
    return None


def from_bridge(result: BridgeAsked | dict[str, Any], first: Chunk, second: Chunk,
                terms: set[str], titled: frozenset[str] = frozenset()) -> Candidate:
    """A bridge's candidate: kept when it passes the cheap filters, names its entity only by
    the first chunk's clue, and the judge answering blind agrees with its reference answer
    from both chunks and from neither alone."""
    result = parse(result)
    assert isinstance(result, BridgeAsked)
    task = result.task
    if result.error or not result.question:
        return Candidate("bridge", task, None, "judge_error", result.error or "no draft")
    row = _row("bridge", f"bridge:{first.id}+{second.id}", result.question, result.answer,
               [first, second], link=f"entity: {result.entity}")
    if failed := bridge_failed(result, first, second, terms, titled):
        return Candidate("bridge", task, row, *failed)
    if result.both is None or not result.both.agrees:
        return Candidate("bridge", task, row, "unverified", _blind(result.both))
    for check in result.alone:
        if check.agrees:
            return Candidate("bridge", task, row, "one_chunk_suffices",
                             {"answered from": check.nearest, "answer": check.answer})
    if len(result.alone) < 2:
        return Candidate("bridge", task, row, "judge_error", "a blind check is missing")
    return Candidate("bridge", task, row)


def _error(result: Result) -> str:
    """A task's judge error, or "no draft"."""
    return result.error if result.error is not None else "no draft"


def gives_every_part(answered: Covered | None, question: str) -> bool:
    """The reference answer gives every part its question asks (P ≥ ANSWERED_P for each of
    filters.asked_parts)."""
    parts = asked_parts(answered.parts if answered is not None else [], question)
    return bool(parts) and min(p["p_answered"] for p in parts) >= ANSWERED_P


def _parts(answered: Covered | None) -> Any:
    return [[p["part"], p["p_answered"]] for p in answered.parts] if answered is not None \
        else None


Contradicts = Callable[[Row, list[Row]], Awaitable[str | None]]
"""The id of a kept row that answers an "unanswerable" row, or None (tasks.contradicted)."""


@dataclass
class _Picking:
    """One kind's selection under way: the rows kept so far (with their plan rank), the drops,
    the kept per document, the kept questions' vectors by language, the single drafts kept
    pairs join, and the rows an earlier kind dropped (`gone`: id → why)."""

    kind: str
    embeddings: EmbeddingStore
    duplicate_cosine: float
    contradicts: Contradicts | None
    gone: dict[str, str | None]
    earlier: list[Row]
    rows: list[tuple[int, Row]] = field(default_factory=list)
    drops: list[tuple[int, Candidate]] = field(default_factory=list)
    got: Counter[Doc] = field(default_factory=Counter)
    kept: dict[str, list[np.ndarray]] = field(default_factory=dict)
    asked: set[str] = field(default_factory=set)

    async def take(self, c: Candidate, rank: int) -> None:
        """Keep the candidate, or drop it: a pair joining a question a kept pair joins, a
        colloquial row whose single question was dropped, a near-duplicate, an "unanswerable"
        row a kept row answers."""
        assert c.row is not None
        if used := self.asked & set(c.row.parts or ()):
            c.dropped, c.detail = "duplicate", f"a kept pair asks {sorted(used)[0]}"
        elif c.row.parent in self.gone:
            c.dropped, c.detail = self.gone[c.row.parent], (
                f"its single question {c.row.parent} was dropped")
        else:
            store = await store_for(self.embeddings, c.row.language)
            vec = (await store.vectors([c.row.question]))[0]
            same = self.kept.setdefault(c.row.language, [])
            best = max((float(np.dot(vec, v)) for v in same), default=-1.0)
            if best >= self.duplicate_cosine:
                c.dropped, c.detail = "duplicate", round(best, 3)
            elif self.kind == "unanswerable" and self.contradicts is not None and (
                    other := await self.contradicts(c.row, self.earlier)):
                c.dropped, c.detail = "answerable", {"a kept row answers it": other}
            else:
                same.append(vec)
                self.asked.update(c.row.parts or ())
                self.rows.append((rank, c.row))
                self.got[c.doc] += 1
                return
        self.drops.append((rank, c))


async def assemble(candidates: Sequence[Candidate], embeddings: EmbeddingStore, n: int,
                   duplicate_cosine: float, plan: dict[Doc, int] | None = None,
                   contradicts: Contradicts | None = None) -> Assembled:
    """Rows in kind order, each kind's by the coverage plan (`plan`: the chunks of each
    document, coverage.quotas; None: every candidate counted under one document): first the
    candidates within their document's quota, in plan order, then the places left to those
    of the documents with the fewest kept per chunk (ties: plan order); a candidate the plan
    has no place for is `surplus`. Dropped on the way (`_Picking.take`): near-duplicates
    (cosine ≥ duplicate_cosine to a kept question of the same kind and language, or a pair
    joining a question a kept pair joins), colloquial rows whose single question assemble
    dropped, and "unanswerable" rows a kept answerable row answers (`contradicts`). Rows and
    drops are listed in plan order."""
    out = Assembled()
    weights = plan if plan is not None else {}
    for kind in KINDS:
        mine = [c for c in candidates if c.kind == kind]
        if not mine:
            continue
        counts = out.counts[kind] = {"candidates": len(mine), **dict.fromkeys(FILTERS, 0),
                                     "kept": 0, "retyped": 0}
        quota = quotas(weights, n) if weights else {}
        rank = {id(c): i for i, c in enumerate(mine)}
        picking = _Picking(kind, embeddings, duplicate_cosine, contradicts,
                           {d.row.id: d.dropped for d in out.dropped if d.row is not None},
                           list(out.rows))
        got = picking.got
        waiting: list[Candidate] = []
        for c in mine:
            if c.dropped is not None or c.row is None:
                picking.drops.append((rank[id(c)], c))
            elif (got[c.doc] < quota.get(c.doc, 0)) if quota else len(picking.rows) < n:
                await picking.take(c, rank[id(c)])
            else:
                waiting.append(c)
        while waiting and len(picking.rows) < n:  # places the plan's documents left unused
            c = min(waiting, key=lambda c: (got[c.doc] / max(1, weights.get(c.doc, 1)),
                                            rank[id(c)]))
            waiting.remove(c)
            await picking.take(c, rank[id(c)])
        for c in waiting:
            c.dropped = "surplus"
            picking.drops.append((rank[id(c)], c))
        out.short[kind] = sorted(d for d, q in quota.items() if got[d] < q)
        for _, row in sorted(picking.rows, key=lambda t: t[0]):
            out.rows.append(row)
            counts["kept"] += 1
            counts["retyped"] += bool(row.retyped)
        for _, c in sorted(picking.drops, key=lambda t: t[0]):
            counts[c.dropped or "judge_error"] += 1
            out.dropped.append(Dropped(kind, c.task, c.dropped, c.detail, c.row))
        _count_coverage(out.coverage, kind, mine, quota)
    return out


def _count_coverage(coverage: dict[Doc, dict[str, dict[str, int]]], kind: str,
                    mine: list[Candidate], quota: dict[Doc, int]) -> None:
    """Per document, for the kind: its planned places, its candidates, kept and dropped."""
    for doc in list(quota) + [c.doc for c in mine]:
        coverage.setdefault(doc, {}).setdefault(
            kind, {"planned": quota.get(doc, 0), "candidates": 0, "kept": 0, "dropped": 0})
    for c in mine:
        line = coverage[c.doc][kind]
        line["candidates"] += 1
        kept = c.dropped is None and c.row is not None
        line["kept" if kept else "dropped"] += 1
