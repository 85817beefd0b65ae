"""Turn finished candidates into rows, in plan order: apply the filters (each candidate is
counted under the first one it fails), drop near-duplicates of kept questions by embedder
cosine, keep at most N per kind. Depends only on the candidates, never on their timing."""

from __future__ import annotations

import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from localeval.generate import KINDS
from localeval.generate.chunking import Chunk
from localeval.generate.drafting import ANSWER_CHARS, PAIR_ANSWER_CHARS
from localeval.generate.filters import (
    ANSWERABLE_RATING,
    ANSWERED_P,
    FILTERS,
    adds_answer,
    asks_otherwise,
    first_failed,
    one_fact_asked,
    question_words,
    restates,
)
from localeval.generate.store import Row
from localeval.models.embed import EmbeddingStore, store_for
from localeval.text import match_key

NO_ANSWER = {"en": "The documents do not answer this question.",
             "zh": "文档中没有能回答这个问题的内容。"}


@dataclass
class Candidate:
    """A question before the near-duplicate check, or the filter that dropped it."""

    kind: str
    task: str
    row: Row | None
    dropped: str | None = None
    detail: Any = None


@dataclass
class Assembled:
    rows: list[Row] = field(default_factory=list)
    dropped: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, dict[str, int]] = field(default_factory=dict)


def casual_form(text: str, key: str, language: str) -> str:
    """A user's typing: no end punctuation, lower case, and in English one typo (two letters
    of a long word swapped, the word picked from `key`: the same every time)."""
    text = text.strip().rstrip("?？.。!！ ")
    if language != "en":
        return text
    text = text.lower()
    words = text.split(" ")
    long = [i for i, w in enumerate(words) if len(w) >= 6 and w.isalpha()]
    if long:
        i = long[zlib.crc32(key.encode()) % len(long)]
        w = words[i]
        j = 1 + zlib.crc32(w.encode()) % (len(w) - 3)
        words[i] = w[:j] + w[j + 1] + w[j] + w[j + 2:]
    return " ".join(words)


ZH_SPOKEN = (("什么", "啥"), ("哪里", "哪儿"), ("的", ""))
"""How a Chinese question is typed in speech: 啥 for 什么, 哪儿 for 哪里, no 的."""


def retype(question: str, key: str, language: str) -> str:
    """A single question as a user would type it, by rule: `casual_form` (no end punctuation;
    in English lower case and one typo), and in Chinese the spoken words of ZH_SPOKEN."""
    text = casual_form(question, key, language)
    if language == "zh":
        for written, spoken in ZH_SPOKEN:
            text = text.replace(written, spoken)
    return text


def _row(kind: str, rid: str, question: str, answer: str, chunks: list[Chunk],
         **extra: Any) -> Row:
    sources = list(dict.fromkeys(c.source for c in chunks))
    return Row(id=rid, question=question.strip(), ground_truth=answer.strip(),
               reference_contexts=[c.text for c in chunks], expected_ids=[c.id for c in chunks],
               kind=kind, language=chunks[0].language, source=", ".join(sources), **extra)


def _checked(kind: str, task: str, row: Row, support: dict[str, Any] | None,
             terms: set[str]) -> Candidate:
    cut_at = PAIR_ANSWER_CHARS if kind == "pair" else ANSWER_CHARS
    if failed := first_failed(kind, row.question, row.ground_truth, row.reference_contexts,
                              terms, cut_at):
        return Candidate(kind, task, row, *failed)
    if support is None or support.get("score") != 1.0:
        why = support.get("reason") if support else None
        return Candidate(kind, task, row, "unsupported", why or (support or {}).get("score"))
    return Candidate(kind, task, row)


def from_single(result: dict[str, Any], chunk: Chunk, terms: set[str]) -> list[Candidate]:
    """The single, colloquial and unanswerable candidates of one single-chunk draft (`terms`:
    its document's subject terms)."""
    task, lang = result["task"], chunk.language
    key = task.split(":", 1)[-1]  # the chunk id, and the sentence asked about past the first
    draft = result.get("draft")
    if draft is None or result.get("error"):
        why = result.get("error", "no draft")
        return [Candidate(k, task, None, "judge_error", why)
                for k in ("single", "colloquial", "unanswerable")]
    support = result.get("support")
    single = _checked("single", task, _row("single", f"single:{key}", draft["question"],
                                           draft["answer"], [chunk]), support, terms)
    if single.dropped is None and not _answers(result.get("answered")):
        single.dropped, single.detail = "unanswered", _parts(result.get("answered"))
    casual = casual_form(draft["casual"], key, lang)
    colloquial = _checked("colloquial", task, _row(  # checked before its typo
        "colloquial", f"colloquial:{key}", draft["casual"], draft["answer"], [chunk],
        parent=f"single:{key}"), support, terms)
    if colloquial.row is not None:
        colloquial.row.question = casual
    if colloquial.dropped is None and (told := adds_answer(draft["casual"], draft["question"],
                                                           draft["answer"])):
        colloquial.dropped, colloquial.detail = "answer_in_question", told
    if colloquial.dropped is None and asks_otherwise(draft["casual"], draft["question"]):
        colloquial.dropped, colloquial.detail = "asks_otherwise", sorted(
            question_words(draft["casual"]) ^ question_words(draft["question"]))
    if colloquial.dropped is None and single.dropped is not None:
        colloquial.dropped, colloquial.detail = single.dropped, "its single question's reason"
    if colloquial.dropped is None and match_key(casual) == match_key(draft["question"]):
        colloquial.dropped, colloquial.detail = "duplicate", "the same as its single question"
    if colloquial.dropped is not None and single.dropped is None and single.row is not None:
        # the small judge often writes a statement or a keyword string: the kept single
        # question, retyped by rule, is the same question as a user would type it
        retyped = retype(single.row.question, key, lang)
        if match_key(retyped) != match_key(single.row.question):
            colloquial = Candidate("colloquial", task, single.row.model_copy(update={
                "id": f"colloquial:{key}", "kind": "colloquial", "question": retyped,
                "parent": single.row.id, "retyped": colloquial.dropped}))
    unans = result.get("unanswerable")
    row = Row(id=f"unanswerable:{key}", question=draft["unanswerable"].strip(),
              ground_truth=NO_ANSWER.get(lang, NO_ANSWER["en"]), reference_contexts=[],
              expected_ids=[], kind="unanswerable", language=lang, source=chunk.source,
              topic_ids=[chunk.id])
    if failed := first_failed("unanswerable", row.question, None, [chunk.text], terms,
                              ANSWER_CHARS):
        no_answer = Candidate("unanswerable", task, row, *failed)
    elif restates(row.question, draft["question"]):
        no_answer = Candidate("unanswerable", task, row, "answerable",
                              "restates the question its chunk answers")
    elif unans is None or unans.get("score") is None or unans["score"] >= ANSWERABLE_RATING:
        no_answer = Candidate("unanswerable", task, row, "answerable",
                              {"rating": (unans or {}).get("score"),
                               "nearest": (unans or {}).get("nearest")})
    else:
        no_answer = Candidate("unanswerable", task, row)
    return [single, colloquial, no_answer]


def from_pair(result: dict[str, Any], first: Chunk, second: Chunk, link: str,
              terms: set[str]) -> Candidate:
    task = result["task"]
    draft = result.get("draft")
    if draft is None or result.get("error"):
        return Candidate("pair", task, None, "judge_error", result.get("error", "no draft"))
    row = _row("pair", f"pair:{first.id}+{second.id}", draft["question"], draft["answer"],
               [first, second], link=link)
    checked = _checked("pair", task, row, result.get("support"), terms)
    if checked.dropped is None and one_fact_asked(draft["question"], [draft["fact_1"],
                                                                      draft["fact_2"]], terms):
        return Candidate("pair", task, row, "one_chunk_suffices", "asks about one fact only")
    alone = result.get("alone")
    if checked.dropped is None and (alone is None or 1.0 in alone):
        return Candidate("pair", task, row, "one_chunk_suffices", alone)
    if checked.dropped is None and not _answers(result.get("answered")):
        return Candidate("pair", task, row, "unanswered", _parts(result.get("answered")))
    return checked


def _answers(answered: dict[str, Any] | None) -> bool:
    """The reference answer gives every part of its question (P ≥ ANSWERED_P for each)."""
    return answered is not None and answered.get("p", 0.0) >= ANSWERED_P


def _parts(answered: dict[str, Any] | None) -> Any:
    return [[p["part"], p["p_answered"]] for p in answered["parts"]] if answered else None


async def assemble(candidates: Sequence[Candidate], embeddings: EmbeddingStore, n: int,
                   duplicate_cosine: float) -> Assembled:
    """Rows in kind order, then plan order; near-duplicates (cosine ≥ duplicate_cosine to a
    kept question of the same kind and language) and those past n per kind dropped."""
    out = Assembled()
    for kind in KINDS:
        mine = [c for c in candidates if c.kind == kind]
        if not mine:
            continue
        counts = out.counts[kind] = {"candidates": len(mine), **dict.fromkeys(FILTERS, 0),
                                     "kept": 0, "retyped": 0}
        kept: dict[str, list[np.ndarray]] = {}
        for c in mine:
            if c.dropped is None and c.row is not None:
                if counts["kept"] >= n:
                    c.dropped = "surplus"
                else:
                    store = await store_for(embeddings, c.row.language)
                    vec = (await store.vectors([c.row.question]))[0]
                    same = kept.setdefault(c.row.language, [])
                    best = max((float(np.dot(vec, v)) for v in same), default=-1.0)
                    if best >= duplicate_cosine:
                        c.dropped, c.detail = "duplicate", round(best, 3)
                    else:
                        same.append(vec)
                        out.rows.append(c.row)
                        counts["kept"] += 1
                        counts["retyped"] += bool(c.row.retyped)
                        continue
            counts[c.dropped or "judge_error"] += 1
            out.dropped.append({"kind": kind, "task": c.task, "dropped": c.dropped,
                                "detail": c.detail,
                                **(c.row.model_dump(exclude_none=True) if c.row else {})})
    return out
