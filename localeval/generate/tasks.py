"""One candidate's judge work: draft the question(s) from its chunk(s), then check the
reference answer against its chunks with faithfulness itself (the verdict path at τ, the same
requests and cache as a run's), that it answers every part of its question (answer_relevance's
parts and coverage verdicts), and an "unanswerable" question against the chunks of the whole
corpus nearest to it (BM25 and the embedder) with rerank_relevancy's ratings; the checks a
cheap filter or an earlier check already fails are skipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from localeval.bm25 import BM25
from localeval.config import Settings
from localeval.data.dataset import Sample
from localeval.errors import LocalevalError
from localeval.generate.chunking import Chunk
from localeval.generate.drafting import (
    ANSWER_CHARS,
    PAIR_ANSWER_CHARS,
    context,
    draft_pair,
    draft_single,
    focus_sentences,
)
from localeval.generate.filters import first_failed, restates
from localeval.judge.client import JudgeClient
from localeval.models.embed import EmbeddingStore, store_for
from localeval.text import terms as term_bag

NEAREST = 2
"""Chunks an "unanswerable" question is checked against: its nearest by the embedder, and as
many by BM25 over the whole corpus of its language (each chunk once)."""
LEXICAL_K1 = 1.5
"""BM25's k1 for the corpus lookup (chunks are longer than the evidence step's sentences)."""


@dataclass
class Env:
    """What every task uses: the settings, the judge client, the embedder, the corpus (by
    language: chunks and their unit vectors, in the same order), each document's subject
    terms (filters.subject_terms)."""

    settings: Settings
    judge: JudgeClient
    embeddings: EmbeddingStore
    corpus: dict[str, tuple[list[Chunk], np.ndarray]]
    terms: dict[str, set[str]]
    lexical: dict[str, BM25] = field(default_factory=dict)

    def bm25(self, language: str) -> BM25:
        if language not in self.lexical:
            self.lexical[language] = BM25([term_bag(c.text) for c in self.corpus[language][0]],
                                          k1=LEXICAL_K1)
        return self.lexical[language]

    def terms_of(self, *chunks: Chunk) -> set[str]:
        return set().union(*(self.terms.get(c.source, set()) for c in chunks))


async def supported(env: Env, sid: str, language: str, question: str, answer: str,
                    contexts: list[str]) -> dict[str, Any]:
    """faithfulness(answer | contexts): its score (1.0: every claim supported at τ), its
    details and, when unscored, why."""
    from localeval.metrics import REGISTRY

    sample = Sample(id=sid, question=question, answer=answer, contexts=contexts)
    ctx = context(env.settings, env.judge, env.embeddings, sample, language)
    result = await REGISTRY["faithfulness"].fn(sample, ctx)
    return {"score": result.scores.get("faithfulness"), "reason": result.reason,
            "details": result.details}


async def answered(env: Env, sid: str, language: str, question: str,
                   contexts: list[str]) -> dict[str, Any]:
    """rerank_relevancy(question | contexts) with bare ratings: `score` is the best context's
    rating over 3 (1.0: a context answers the question directly)."""
    from localeval.metrics import REGISTRY

    sample = Sample(id=sid, question=question, contexts=contexts)
    bare = env.settings.model_copy(update={"explain": False})
    ctx = context(bare, env.judge, env.embeddings, sample, language)
    result = await REGISTRY["rerank_relevancy"].fn(sample, ctx)
    return {"score": result.scores.get("rerank_relevancy.max"), "reason": result.reason,
            "details": result.details}


async def answers_every_part(env: Env, sid: str, language: str, question: str,
                             answer: str) -> dict[str, Any]:
    """answer_relevance's completeness for the reference answer: the parts of the question
    (from the question alone) and P(the answer gives it) for each; `p` the smallest."""
    from localeval.metrics.answer_relevance import coverage, parts_of

    sample = Sample(id=sid, question=question, answer=answer)
    ctx = context(env.settings, env.judge, env.embeddings, sample, language)
    parts = await parts_of(ctx, question)
    got = await coverage(ctx, question, answer, parts)
    return {"p": min(g["p_answered"] for g in got), "parts": got}


async def nearest_chunks(env: Env, text: str, language: str, k: int = NEAREST) -> list[Chunk]:
    """The k chunks of the language BM25 ranks first for `text`, then the k closest by cosine
    (ties by id), each once: the whole corpus of the language, not only `text`'s document."""
    chunks, vectors = env.corpus[language]
    store = await store_for(env.embeddings, language)
    query = (await store.vectors([text]))[0]
    sims = vectors @ query
    order = sorted(range(len(chunks)), key=lambda i: (-float(sims[i]), chunks[i].id))
    picked = list(dict.fromkeys(env.bm25(language).top(set(term_bag(text)), k) + order[:k]))
    return [chunks[i] for i in picked]


async def single_task(env: Env, task: str, chunk: Chunk, focus: str) -> dict[str, Any]:
    """Draft from one sentence of a chunk (question, answer, casual form, unanswerable
    question), then check the answer against the chunk and whether the nearest chunks answer
    the unanswerable question; a check whose candidates a cheap filter drops is skipped."""
    lang = chunk.language
    out: dict[str, Any] = {"task": task}
    ctx = context(env.settings, env.judge, env.embeddings, Sample(id=task), lang)
    try:
        draft = await draft_single(ctx, chunk.text, focus)
    except LocalevalError as exc:
        return out | {"error": str(exc)}
    out["draft"] = draft.model_dump()
    terms = env.terms_of(chunk)
    try:
        if any(first_failed(kind, q, draft.answer, [chunk.text], terms, ANSWER_CHARS) is None
               for kind, q in (("single", draft.question), ("colloquial", draft.casual))):
            out["support"] = await supported(env, task, lang, draft.question, draft.answer,
                                             [chunk.text])
            if out["support"]["score"] == 1.0:
                out["answered"] = await answers_every_part(env, task, lang, draft.question,
                                                           draft.answer)
        if first_failed("unanswerable", draft.unanswerable, None, [chunk.text], terms,
                        ANSWER_CHARS) is None and not restates(draft.unanswerable,
                                                               draft.question):
            near = await nearest_chunks(env, draft.unanswerable, lang)
            check = await answered(env, f"{task}:unanswerable", lang, draft.unanswerable,
                                   [c.text for c in near])
            out["unanswerable"] = check | {"nearest": [c.id for c in near]}
    except LocalevalError as exc:
        out["error"] = str(exc)
    return out


async def linked_facts(env: Env, first: Chunk, second: Chunk) -> tuple[str, str]:
    """A sentence of each chunk, the two closest by the embedder (ties: the earlier ones)."""
    a = focus_sentences(first.text) or [first.text]
    b = focus_sentences(second.text) or [second.text]
    store = await store_for(env.embeddings, first.language)
    sims = (await store.vectors(a)) @ (await store.vectors(b)).T
    i, j = max(((i, j) for i in range(len(a)) for j in range(len(b))),
               key=lambda ij: (round(float(sims[ij]), 6), -ij[0], -ij[1]))
    return a[i], b[j]


async def pair_task(env: Env, task: str, first: Chunk, second: Chunk) -> dict[str, Any]:
    """Draft a question needing a sentence of each chunk (its answer: the two sentences), check
    the answer against both chunks together, then against each alone (the same verdict path):
    a pair is kept only when neither suffices."""
    lang = first.language
    out: dict[str, Any] = {"task": task}
    ctx = context(env.settings, env.judge, env.embeddings, Sample(id=task), lang)
    try:
        fact_1, fact_2 = await linked_facts(env, first, second)
        draft = await draft_pair(ctx, first.text, second.text, fact_1, fact_2)
        out["draft"] = draft.model_dump()
        if first_failed("pair", draft.question, draft.answer, [first.text, second.text],
                        env.terms_of(first, second), PAIR_ANSWER_CHARS) is None:
            both = await supported(env, task, lang, draft.question, draft.answer,
                                   [first.text, second.text])
            out["support"] = both
            if both["score"] == 1.0:
                out["alone"] = []
                for chunk in (first, second):
                    one = await supported(env, task, lang, draft.question, draft.answer,
                                          [chunk.text])
                    out["alone"].append(one["score"])
                    if one["score"] == 1.0:
                        break
                if 1.0 not in out["alone"]:
                    out["answered"] = await answers_every_part(env, task, lang, draft.question,
                                                               draft.answer)
    except LocalevalError as exc:
        out["error"] = str(exc)
    return out
