"""One candidate's judge work: draft the question(s) from its chunk(s), rewrite a question
naming no subject to name it, then check the reference answer against its chunks with
faithfulness itself (the verdict path at τ, the same requests and cache as a run's), that it
answers every part of its question (answer_relevance's parts and coverage verdicts), that the
judge answering the question blind from the corpus's top BM25 chunks gives the same answer
(`blind`), and an "unanswerable" question against the chunks of the whole corpus nearest to it
(BM25 and the embedder) with rerank_relevancy's ratings and the judge's own answer from them;
a bridge (`bridge_task`) blind from both its chunks and from each alone; a kept
"unanswerable" row against the kept rows (`contradicted`). The checks a cheap filter or an
earlier check already fails are skipped."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

import numpy as np

from localeval.bm25 import BM25
from localeval.config import Settings
from localeval.data.dataset import Sample
from localeval.errors import LocalevalError
from localeval.generate.answer_kind import answer_lacks
from localeval.generate.answerable import ANSWERABLE_RATING, STATED_SHARE, declines, stated_in
from localeval.generate.assemble import bridge_failed, gives_every_part, usable_part
from localeval.generate.chunking import Chunk
from localeval.generate.drafting import (
    ANSWER_CHARS,
    SingleDraft,
    agrees,
    answers_other,
    attempt,
    context,
    draft_bridge,
    draft_single,
    focus_sentences,
    rename,
)
from localeval.generate.filters import (
    FILTERS,
    answer_in_question,
    first_failed,
    only_places,
    restates,
    same_question,
)
from localeval.generate.picking import entity_of, name_forms, names_in
from localeval.generate.records import (
    Asked,
    Attempted,
    BridgeAsked,
    Covered,
    Draft,
    PairAsked,
    Support,
    Unanswerable,
    Verified,
)
from localeval.generate.store import Row
from localeval.generate.subjects import Naming, named, names_subject, subject_name
from localeval.judge.client import JudgeClient
from localeval.metrics.base import MetricContext
from localeval.models.embed import EmbeddingStore, store_for
from localeval.text import ranking_terms, split_sentences

NEAREST = 2
"""Chunks an "unanswerable" question is checked against: its nearest by the embedder, and as
many by BM25, over the whole corpus of its language and over its own document (each chunk
once: `nearest_chunks`)."""
LEXICAL_K1 = 1.5
"""BM25's k1 for the corpus lookup (chunks are longer than the evidence step's sentences)."""


@dataclass
class Env:
    """What every task uses: the settings, the judge client, the embedder, the corpus (by
    language: chunks and their unit vectors, in the same order) and what names each document's
    subject (subjects.Naming, by source). `every_check`: every check runs on every draft,
    whatever the filters and earlier checks say (generate --estimate's upper bound on the
    judge's work)."""

    settings: Settings
    judge: JudgeClient
    embeddings: EmbeddingStore
    corpus: dict[str, tuple[list[Chunk], np.ndarray]]
    naming: dict[str, Naming]
    lexical: dict[str, BM25] = field(default_factory=dict)
    said: dict[str, list[str]] = field(default_factory=dict)
    every_check: bool = False
    drafts: dict[str, asyncio.Future[Asked]] = field(default_factory=dict)
    crossed: dict[tuple[str, str], bool] = field(default_factory=dict)

    def bm25(self, language: str) -> BM25:
        if language not in self.lexical:
            self.lexical[language] = BM25([ranking_terms(c.text) for c in self.corpus[language][0]],
                                          k1=LEXICAL_K1)
        return self.lexical[language]

    def sentences(self, language: str) -> list[str]:
        """Every sentence of the corpus of the language."""
        if language not in self.said:
            self.said[language] = [x for c in self.corpus[language][0]
                                   for x in split_sentences(c.text)]
        return self.said[language]

    async def asked(self, task: str, chunk: Chunk, focus: str) -> Asked:
        """`asked` once per task name: the single feed and every pair asking the same sentence
        share one draft and its checks (with --no-cache too)."""
        if task not in self.drafts:
            self.drafts[task] = asyncio.ensure_future(asked(self, task, chunk, focus))
        return await self.drafts[task]

    def known(self, task: str, result: Asked) -> None:
        """A draft finished before (a resumed run's work file): `asked` returns it."""
        self.drafts[task] = asyncio.get_running_loop().create_future()
        self.drafts[task].set_result(result)

    def naming_of(self, chunk: Chunk) -> Naming:
        """What names the subject of the chunk's document."""
        return self.naming.get(chunk.source, Naming())

    def terms_of(self, *chunks: Chunk) -> set[str]:
        return set().union(*(self.naming_of(c).terms for c in chunks))

    def titled(self, *chunks: Chunk) -> frozenset[str]:
        """The content words of the chunks' documents' titles (shown beside each chunk)."""
        return frozenset().union(*(self.naming_of(c).title_words for c in chunks))


async def supported(env: Env, sid: str, language: str, question: str, answer: str,
                    contexts: list[str]) -> Support:
    """faithfulness(answer | contexts): its score (1.0: every claim supported at τ), its
    details and, when unscored, why."""
    from localeval.metrics import REGISTRY

    sample = Sample(id=sid, question=question, answer=answer, contexts=contexts)
    ctx = context(env.settings, env.judge, env.embeddings, sample, language)
    result = await REGISTRY["faithfulness"].fn(sample, ctx)
    return Support(score=result.scores.get("faithfulness"), reason=result.reason,
                   details=result.details)


async def answered(env: Env, sid: str, language: str, question: str,
                   contexts: list[str]) -> Unanswerable:
    """rerank_relevancy(question | contexts) asked twice, with a reason before each rating (as a
    run asks it) and bare: `score` is the best rating of either over 3 (1.0: a context answers
    the question directly). A question is unanswerable only when neither finds its answer: the
    1.5B judge's bare rating put "上午九点至下午五点开放" at 1 for "江州博物馆的开放时间是什么
    时候？" (with its reason, 3), and its reasoned rating put "140 members" at 0 for "How many
    members does the Alder Street Chess Club have now?" (bare, 2)."""
    from localeval.metrics import REGISTRY

    sample = Sample(id=sid, question=question, contexts=contexts)
    out = Unanswerable(details={})
    for explain in (True, False):
        settings = env.settings.model_copy(update={"explain": explain})
        ctx = context(settings, env.judge, env.embeddings, sample, language)
        result = await REGISTRY["rerank_relevancy"].fn(sample, ctx)
        score = result.scores.get("rerank_relevancy.max")
        if score is None:
            return Unanswerable(reason=result.reason, details=result.details)
        out.score = max(score, out.score or 0.0)
        (out.details or {})["reasoned" if explain else "bare"] = result.details
    return out


async def answers_every_part(env: Env, sid: str, language: str, question: str,
                             answer: str) -> Covered:
    """answer_relevance's completeness for the reference answer: the parts of the question
    (from the question alone) and P(the answer gives it) for each; `p` the smallest."""
    from localeval.metrics.answer_relevance import coverage, parts_of

    sample = Sample(id=sid, question=question, answer=answer)
    ctx = context(env.settings, env.judge, env.embeddings, sample, language)
    parts = await parts_of(ctx, question)
    got = await coverage(ctx, question, answer, parts)
    return Covered(p=min(g["p_answered"] for g in got), parts=got)


VERIFY_K = 3
"""Chunks of the whole corpus of its language, BM25's top, that the judge answers a question
from blind to verify its reference answer (`blind`): the question's own chunk must be among
them, as a retriever would find it, or the judge has nothing to answer from."""


def corpus_top(env: Env, question: str, language: str, k: int = VERIFY_K) -> list[Chunk]:
    """The k chunks of the whole corpus of the language that BM25 ranks first for the
    question (those sharing a term with it; ties by corpus order)."""
    chunks = env.corpus[language][0]
    return [chunks[i] for i in env.bm25(language).top(set(ranking_terms(question)), k)]


async def blind(env: Env, sid: str, language: str, question: str, reference: str,
                chunks: list[Chunk]) -> Verified:
    """The judge answers `question` from `chunks` alone (generate_attempt, never shown the
    reference), then says whether its answer gives the reference answer's (generate_agree,
    yes/no); an answer that declines ("none", 无) agrees with nothing."""
    ctx = context(env.settings, env.judge, env.embeddings, Sample(id=f"{sid}:blind"), language)
    answer = await attempt(ctx, question, [c.text for c in chunks])
    out = Verified(answer=answer, nearest=[c.id for c in chunks], declined=declines(answer))
    if not out.declined or env.every_check:
        out.agrees = await agrees(ctx, question, reference, answer) and not out.declined
    return out


CONTRADICT_K = 2
"""Kept answerable rows (single, pair, bridge) of its language, nearest by the embedder, that
an "unanswerable" row is checked against (`contradicted`)."""


async def contradicted(env: Env, row: Row, kept: list[Row]) -> str | None:
    """The id of a kept answerable row whose question and answer answer the "unanswerable"
    row's question (the judge's yes/no, generate_answers), of the CONTRADICT_K nearest it by
    the embedder, or None: a test set never calls a question it answers unanswerable."""
    mine = [r for r in kept if r.language == row.language and r.ground_truth
            and r.kind in ("single", "pair", "bridge")]
    if not mine:
        return None
    store = await store_for(env.embeddings, row.language)
    vectors = await store.vectors([row.question] + [r.question for r in mine])
    sims = vectors[1:] @ vectors[0]
    nearest = sorted(range(len(mine)), key=lambda i: (-float(sims[i]), mine[i].id))
    ctx = context(env.settings, env.judge, env.embeddings, Sample(id=f"{row.id}:crossed"),
                  row.language)
    for i in nearest[:CONTRADICT_K]:
        other = mine[i]
        key = (row.question, other.id)
        if key not in env.crossed:
            env.crossed[key] = await answers_other(ctx, row.question, other.question,
                                                   other.ground_truth)
        if env.crossed[key] and not env.every_check:
            return other.id
    return None


async def nearest_chunks(env: Env, text: str, language: str, source: str,
                         k: int = NEAREST) -> list[Chunk]:
    """The chunks of the language that may answer `text`, each once: the k that BM25 ranks
    first and the k closest by cosine (ties by id), of the whole corpus of the language, then
    as many of `source`, the document the question was drafted from (its chunk saying when a
    museum opens is rarely among the corpus's top k, which the museum's name fills)."""
    chunks, vectors = env.corpus[language]
    store = await store_for(env.embeddings, language)
    query = (await store.vectors([text]))[0]
    sims = vectors @ query
    lexical = env.bm25(language).scores(set(ranking_terms(text)))
    picked: list[int] = []
    for pool in (range(len(chunks)), [i for i, c in enumerate(chunks) if c.source == source]):
        picked += [i for i in sorted(pool, key=lambda i: (-lexical[i], i))[:k] if lexical[i] > 0]
        picked += sorted(pool, key=lambda i: (-float(sims[i]), chunks[i].id))[:k]
    return [chunks[i] for i in dict.fromkeys(picked)]


async def asked(env: Env, task: str, chunk: Chunk, focus: str) -> Asked:
    """Draft from one sentence of a chunk (question, answer, casual form, unanswerable
    question; a short form of the document's name in them written in full, a question naming
    no subject rewritten to name it: `renamed`), then check the answer against the chunk
    (faithfulness) and that it gives every part of its question; skipped when a cheap filter
    already drops both the question and its casual form."""
    lang = chunk.language
    out = Asked(task=task)
    ctx = context(env.settings, env.judge, env.embeddings, Sample(id=task), lang)
    try:
        draft = await draft_single(ctx, chunk.text, focus, env.naming_of(chunk).title)
    except LocalevalError as exc:
        return out.model_copy(update={"error": str(exc)})
    terms, titled = env.terms_of(chunk), env.titled(chunk)
    if name := env.naming_of(chunk).name:  # "the bridge" → "the Severn Gate Bridge"
        full = {f: named(q, name) for f in ("question", "casual", "unanswerable")
                if not names_subject(q := getattr(draft, f), terms)}
        if full := {f: q for f, q in full.items() if q != getattr(draft, f)}:
            draft, out.named = draft.model_copy(update=full), sorted(full)
    try:
        draft, fields = await renamed(env, ctx, draft, chunk)
        if fields:
            out.renamed = fields
    except LocalevalError as exc:
        return out.model_copy(update={"error": str(exc)})
    out.draft = Draft(**draft.model_dump())
    try:
        if env.every_check or any(
                first_failed(kind, q, draft.answer, [chunk.text], terms, ANSWER_CHARS,
                             titled) is None
                for kind, q in (("single", draft.question), ("colloquial", draft.casual))):
            out.support = await supported(env, task, lang, draft.question, draft.answer,
                                          [chunk.text])
            if env.every_check or out.support.score == 1.0:
                out.answered = await answers_every_part(env, task, lang, draft.question,
                                                           draft.answer)
            if env.every_check or (
                    out.support.score == 1.0 and gives_every_part(out.answered, draft.question)
                    and first_failed("single", draft.question, draft.answer, [chunk.text],
                                     terms, ANSWER_CHARS, titled) is None):
                top = corpus_top(env, draft.question, lang)
                out.verified = await blind(env, task, lang, draft.question, draft.answer, top)
    except LocalevalError as exc:
        out.error = str(exc)
    return out


async def renamed(env: Env, ctx: MetricContext, draft: SingleDraft,
                  chunk: Chunk) -> tuple[SingleDraft, list[str]]:
    """The draft with its question and its unanswerable question rewritten by the judge to
    hold their subject's name (drafting.rename; subjects.subject_name), each only when it names
    no subject and passes every filter before unnamed_subject ("When was the mirror cast?" →
    "When was the mirror of the Hallam Hill Observatory cast?"), or, a question in a document
    with a name, when it passes every filter naming only another name of its body ("When did
    the comet pass closest to the Sun?", "Who designed the red-brick building on Market
    Street?": which comet, which town?); a rewrite is taken when it names the subject (that
    name, for the second) and asks the same (filters.same_question; the second only placing
    the question at its subject, filters.only_places). Not an unanswerable
    question naming another name: rewritten, "How many players are in the tournament each
    year?" (answered: 212) passed the 1.5B judge's checks. And the fields rewritten."""
    naming = env.naming_of(chunk)
    terms, titled = env.terms_of(chunk), env.titled(chunk)
    name = subject_name(draft.subject, terms, naming.name)
    if not name and env.every_check:  # a placeholder subject is no name; a judge's may be
        name = naming.name or draft.subject
    if not name:
        return draft, []
    own = set(naming.own_terms)
    update: dict[str, str] = {}
    for part, kind, answer in (("question", "single", draft.answer),
                               ("unanswerable", "unanswerable", None)):
        question = getattr(draft, part)
        failed = first_failed(kind, question, answer, [chunk.text], terms, ANSWER_CHARS,
                              titled)
        aside = part == "question" and failed is None and naming.name != "" and \
            bool(own) and not names_subject(question, own)
        if not (env.every_check or aside or (failed or ("",))[0] == "unnamed_subject"):
            continue
        rewrite = await rename(ctx, question, name)
        if names_subject(rewrite, own if aside else terms) and \
                same_question(question, rewrite, name, answer) and \
                (not aside or only_places(question, rewrite, name)):
            update[part] = rewrite
    return (draft.model_copy(update=update) if update else draft), sorted(update)


async def single_task(env: Env, task: str, chunk: Chunk, focus: str) -> Asked:
    """`asked`, then whether the corpus answers the unanswerable question: a sentence holding
    its words (answerable.stated_in), else the chunks nearest to it as rerank_relevancy rates
    them, else the judge's own answer from them (`attempted`). A judge error in those checks
    is the unanswerable question's alone (`unanswerable.error`)."""
    out = await env.asked(task, chunk, focus)
    if out.draft is None or out.error:
        return out
    draft = out.draft
    passes = first_failed("unanswerable", draft.unanswerable, None, [chunk.text],
                          env.terms_of(chunk), ANSWER_CHARS, env.titled(chunk)) is None \
        and not restates(draft.unanswerable, draft.question)
    if passes or env.every_check:
        share, sentence = stated_in(draft.unanswerable, env.sentences(chunk.language),
                                    env.naming_of(chunk).named_by)
        if share >= STATED_SHARE and not env.every_check:  # a sentence of the corpus says it
            return out.model_copy(update={"unanswerable": Unanswerable(stated=sentence)})
        try:
            near = await nearest_chunks(env, draft.unanswerable, chunk.language,
                                        chunk.source)
            check = await answered(env, f"{task}:unanswerable", chunk.language,
                                   draft.unanswerable, [c.text for c in near])
            check.nearest = [c.id for c in near]
            if env.every_check or (check.score is not None and check.score < ANSWERABLE_RATING):
                check.attempt = await attempted(env, task, chunk, draft.unanswerable)
            out = out.model_copy(update={"unanswerable": check})
        except LocalevalError as exc:  # the draft's single and colloquial candidates go on
            out = out.model_copy(update={"unanswerable": Unanswerable(error=str(exc))})
    return out


ATTEMPT_NEAREST = 3
"""Chunks of each kind (`nearest_chunks`) the judge answers an "unanswerable" question from:
more than rerank_relevancy rates one by one, in one prompt."""


async def attempted(env: Env, task: str, chunk: Chunk, question: str) -> Attempted:
    """The judge's answer to an "unanswerable" question from the chunks nearest it, and
    whether it answers it (`answers`): not declined ("none"), of the kind asked
    (answer_lacks), saying more than the question, and supported by those chunks
    (faithfulness, at τ). The 1.5B judge rated "镇馆之宝是一件西周时期的青铜鼎，名为江伯鼎" 0
    for "江州博物馆镇馆之宝是什么？" with a reason and without, and answered it "江伯鼎"."""
    near = await nearest_chunks(env, question, chunk.language, chunk.source, ATTEMPT_NEAREST)
    texts = [c.text for c in near]
    ctx = context(env.settings, env.judge, env.embeddings, Sample(id=f"{task}:attempt"),
                  chunk.language)
    answer = await attempt(ctx, question, texts)
    out = Attempted(answer=answer, nearest=[c.id for c in near])
    kind_fits = not (declines(answer) or answer_lacks(question, answer)
                     or answer_in_question(question, answer))
    if kind_fits or env.every_check:
        support = await supported(env, f"{task}:attempt", chunk.language, question, answer,
                                  texts)
        out.answers = kind_fits and support.score == 1.0
    return out


def single_name(chunk_id: str, k: int) -> str:
    """The task of a chunk's k-th focus sentence (from 0): "single:ID", then "single:ID@2"..."""
    return f"single:{chunk_id}" + (f"@{k + 1}" if k else "")


def part_order(chunk: Chunk, link: str) -> list[tuple[str, str]]:
    """The sentences a pair may ask of one of its chunks, as single-chunk tasks (the same task
    names, so the same judge requests as the single feed's): the chunk's focus sentences, those
    holding the pair's linking term first."""
    focus = focus_sentences(chunk.text) or [chunk.text]
    tasks = [(single_name(chunk.id, k), s) for k, s in enumerate(focus)]
    term = link.split(": ", 1)[1] if link.startswith("entity: ") else None
    return sorted(tasks, key=lambda t: term is None or term not in t[1])


async def pair_task(env: Env, task: str, first: Chunk, second: Chunk, link: str,
                    tries: int) -> PairAsked:
    """A question of each chunk, asked as a single-chunk draft is (`asked`): the first of up
    to `tries` sentences whose question passes the single-chunk filters. When both pass, each
    answer is checked against the other chunk (the same verdict path): a pair is kept only when
    neither chunk supports both answers. The question is the two questions joined
    (assemble.from_pair)."""
    out = PairAsked(task=task)
    try:
        for chunk in (first, second):
            tried = []
            for name, focus in part_order(chunk, link)[:tries]:
                part = await env.asked(name, chunk, focus)
                unusable = usable_part(part, chunk, env.terms_of(chunk), env.titled(chunk))
                tried.append((FILTERS.index(unusable[0]) if unusable else len(FILTERS), part))
                if unusable is None or env.every_check:
                    break
            out.parts.append(max(tried, key=lambda t: t[0])[1])  # else the one got furthest
            if unusable is not None and (not env.every_check or part.draft is None):
                return out
        out.other_chunk = []
        for part, other in zip(out.parts, (second, first), strict=True):
            assert part.draft is not None
            check = await supported(env, task, other.language, part.draft.question,
                                    part.draft.answer, [other.text])
            out.other_chunk.append(check.score)
            if check.score == 1.0 and not env.every_check:
                break
    except LocalevalError as exc:
        out.error = str(exc)
    return out


async def bridge_task(env: Env, task: str, first: Chunk, second: Chunk,
                      entity: str) -> BridgeAsked:
    """A bridge of two chunks: `entity`, which the first names, is the subject of the second.
    The judge writes a question naming it only by the first chunk's clue and asking a fact of
    the second; checked blind (`blind`): from both chunks the judge's answer must agree with the
    reference, from the first alone and from the second alone it must not (stopped at the
    first check that fails; the cheap filters first, assemble.bridge_failed). The second
    alone is not asked when it never writes the first's subject, which the clue names: it
    cannot tell who or what is meant, and a small judge shown one person's page answers any
    question about "the composer of Doctor Dolittle" with that person's facts."""
    subject = entity_of(env.naming_of(first))
    out = BridgeAsked(task=task, entity=entity, subject=subject)
    lang = first.language
    ctx = context(env.settings, env.judge, env.embeddings, Sample(id=task), lang)
    try:
        draft = await draft_bridge(ctx, entity, first.text, second.text,
                                   env.naming_of(first).title, env.naming_of(second).title,
                                   subject)
        out = out.model_copy(update={"role": draft.role, "clue": draft.clue, "asked": draft.asked,
                                     "question": draft.question, "answer": draft.answer})
        if bridge_failed(out, first, second, env.terms_of(first, second),
                         env.titled(first, second)) and not env.every_check:
            return out
        out.both = await blind(env, task, lang, out.question, out.answer, [first, second])
        if out.both.agrees or env.every_check:
            for alone in (first, second):
                if alone is second and subject and not any(
                        names_in(second.text, form) for form in name_forms(subject)):
                    out.alone.append(Verified(nearest=[second.id], unlinked=True))
                    continue
                check = await blind(env, task, lang, out.question, out.answer, [alone])
                out.alone.append(check)
                if check.agrees and not env.every_check:
                    break
    except LocalevalError as exc:
        out.error = str(exc)
    return out
