"""One candidate's judge work: draft the question(s) from its chunk(s), then check the
reference answer against its chunks with faithfulness itself (the verdict path at τ, the same
requests and cache as a run's), and an "unanswerable" question against its nearest chunks with
rerank_relevancy's ratings; the checks a cheap filter already fails are skipped."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from localeval.config import Settings
from localeval.data.dataset import Sample
from localeval.errors import LocalevalError
from localeval.generate.chunking import Chunk
from localeval.generate.drafting import context, draft_pair, draft_single
from localeval.generate.filters import answer_in_question, self_contained
from localeval.judge.client import JudgeClient
from localeval.models.embed import EmbeddingStore, store_for

NEAREST = 2
"""Chunks an "unanswerable" question is checked against: its nearest by the embedder."""


@dataclass
class Env:
    """What every task uses: the settings, the judge client, the embedder, the corpus (by
    language: chunks and their unit vectors, in the same order)."""

    settings: Settings
    judge: JudgeClient
    embeddings: EmbeddingStore
    corpus: dict[str, tuple[list[Chunk], np.ndarray]]


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


async def nearest_chunks(env: Env, text: str, language: str, k: int = NEAREST) -> list[Chunk]:
    """The k chunks of the language closest to `text` by cosine (ties by id)."""
    chunks, vectors = env.corpus[language]
    store = await store_for(env.embeddings, language)
    query = (await store.vectors([text]))[0]
    sims = vectors @ query
    order = sorted(range(len(chunks)), key=lambda i: (-float(sims[i]), chunks[i].id))
    return [chunks[i] for i in order[:k]]


async def single_task(env: Env, task: str, chunk: Chunk) -> dict[str, Any]:
    """Draft from one chunk (question, answer, casual form, unanswerable question), then check
    the answer against the chunk and whether the nearest chunks answer the unanswerable one."""
    lang = chunk.language
    out: dict[str, Any] = {"task": task}
    ctx = context(env.settings, env.judge, env.embeddings, Sample(id=task), lang)
    try:
        draft = await draft_single(ctx, chunk.text)
    except LocalevalError as exc:
        return out | {"error": str(exc)}
    out["draft"] = draft.model_dump()
    try:
        if any(self_contained(q) and not answer_in_question(q, draft.answer)
               for q in (draft.question, draft.casual)):
            out["support"] = await supported(env, task, lang, draft.question, draft.answer,
                                             [chunk.text])
        if self_contained(draft.unanswerable):
            near = await nearest_chunks(env, draft.unanswerable, lang)
            check = await answered(env, f"{task}:unanswerable", lang, draft.unanswerable,
                                   [c.text for c in near])
            out["unanswerable"] = check | {"nearest": [c.id for c in near]}
    except LocalevalError as exc:
        out["error"] = str(exc)
    return out


async def pair_task(env: Env, task: str, first: Chunk, second: Chunk) -> dict[str, Any]:
    """Draft a question needing both chunks, then check its answer against both."""
    lang = first.language
    out: dict[str, Any] = {"task": task}
    ctx = context(env.settings, env.judge, env.embeddings, Sample(id=task), lang)
    try:
        draft = await draft_pair(ctx, first.text, second.text)
        out["draft"] = draft.model_dump()
        if self_contained(draft.question) and not answer_in_question(draft.question,
                                                                     draft.answer):
            out["support"] = await supported(env, task, lang, draft.question, draft.answer,
                                             [first.text, second.text])
    except LocalevalError as exc:
        out["error"] = str(exc)
    return out
