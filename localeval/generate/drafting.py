"""Ask the judge for drafts: the generation steps, their output schemas (grammar-constrained
JSON through the run's JudgeClient, the one parse path), and their golden-prompt examples."""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field

from localeval.config import Settings
from localeval.data.dataset import Sample
from localeval.generate.answer_kind import answer_lacks
from localeval.generate.lang import written_in
from localeval.generate.picking import name_forms
from localeval.generate.words import content_words, stem
from localeval.judge.client import JudgeClient
from localeval.metrics.base import MetricContext
from localeval.models.embed import EmbeddingStore
from localeval.text import normalize, split_sentences

SINGLE_STEP = "generate_single"
RENAME_STEP = "generate_rename"
ATTEMPT_STEP = "generate_attempt"
AGREE_STEP = "generate_agree"
ANSWERS_STEP = "generate_answers"
BRIDGE_STEP = "generate_bridge"
CLUE_STEP = "generate_clue"
STEPS = (SINGLE_STEP, RENAME_STEP, ATTEMPT_STEP, AGREE_STEP, ANSWERS_STEP, BRIDGE_STEP,
         CLUE_STEP)
ANSWER_CHARS = 240
"""The schema's longest answer: longer than the long_answer filter lets through, so an answer
the grammar cut is always dropped, never kept cut."""
SHORT_CHARS = 100
PAIR_ANSWER_CHARS = 2 * ANSWER_CHARS
QUESTION_CHARS = 160
ROLE_CHARS = 40
ROLE_WORDS = 5
"""A bridge's role, at most: English words, Chinese twice as many characters."""
_QUESTION_END = re.compile(r"[?？]")
_CLAUSE = re.compile(r"[,，、;；]")
_HEADING_LINE = re.compile(r"^\s{0,3}#{1,6}\s")


class SingleDraft(BaseModel):
    """From one sentence of a chunk: its subject's name, a specific question about one fact and
    its short answer, the question as a user would type it, a detail the chunk does not give
    and an on-topic question asking for it."""

    subject: str = Field(max_length=SHORT_CHARS, description="the name it is about")
    question: str = Field(max_length=QUESTION_CHARS, description="specific, names its subject")
    answer: str = Field(max_length=ANSWER_CHARS, description="one short sentence")
    casual: str = Field(max_length=SHORT_CHARS, description="the same question, typed in a "
                        "hurry")
    missing: str = Field(max_length=SHORT_CHARS, description="a detail the text never gives")
    unanswerable: str = Field(max_length=QUESTION_CHARS, description="asks for that detail")


class Renamed(BaseModel):
    """A question rewritten to hold its subject's name, asking the same."""

    question: str = Field(max_length=QUESTION_CHARS, description="names the subject")


class Attempt(BaseModel):
    """The judge's answer to a question from some chunks, or "none" (Chinese 无)."""

    answer: str = Field(max_length=ANSWER_CHARS, description="one short sentence, or none")


class Agreed(BaseModel):
    """A yes/no verdict: two answers give the same answer (generate_agree), or a kept row's
    answer answers another question (generate_answers)."""

    verdict: Literal[0, 1] = Field(description="1 = yes, 0 = no")


class Role(BaseModel):
    """What an entity is to the subject of one chunk (A), in a few words: "director"."""

    role: str = Field(max_length=ROLE_CHARS, description="the entity's role, without its name")


class BridgeQuestion(BaseModel):
    """A question about a fact of one chunk (B) that writes its entity's name, and its answer
    from B."""

    question: str = Field(max_length=QUESTION_CHARS, description="names the entity")
    answer: str = Field(max_length=ANSWER_CHARS, description="one short sentence, from B")


class BridgeDraft(BaseModel):
    """A bridge's draft: the entity's role to A's subject and the clue made of them (`clue_of`),
    B's question with the entity written as the clue (`by_clue`), and its answer from B."""

    role: str
    clue: str
    asked: str
    """The question as the judge wrote it, naming the entity."""
    question: str
    answer: str


EXAMPLES: dict[str, dict[str, dict[str, Any]]] = {
    SINGLE_STEP: {
        "en": {"title": "Heat (1995 film)",
               "text": "Heat is a 1995 crime film written and directed by Michael Mann. It "
                       "stars Al Pacino and Robert De Niro.",
               "focus": "It stars Al Pacino and Robert De Niro."},
        "zh": {"title": "英雄（电影）",
               "text": "《英雄》是张艺谋执导的武侠电影，于2002年在中国上映。"
                       "这部电影由李连杰、梁朝伟主演。",
               "focus": "这部电影由李连杰、梁朝伟主演。"},
    },
    RENAME_STEP: {
        "en": {"name": "Heat (1995 film)", "question": "Who directed the film?"},
        "zh": {"name": "英雄（电影）", "question": "这部电影是谁执导的？"},
    },
    ATTEMPT_STEP: {
        "en": {"question": "Who composed the music of Heat (1995 film)?",
               "context": ["Heat is a 1995 crime film written and directed by Michael Mann."]},
        "zh": {"question": "电影《英雄》的配乐是谁创作的？",
               "context": ["《英雄》是张艺谋执导的武侠电影，于2002年在中国上映。"]},
    },
    AGREE_STEP: {
        "en": {"question": "Who directed Heat (1995 film)?",
               "reference": "Heat was directed by Michael Mann.", "answer": "Michael Mann."},
        "zh": {"question": "电影《英雄》是谁执导的？", "reference": "《英雄》由张艺谋执导。",
               "answer": "张艺谋。"},
    },
    ANSWERS_STEP: {
        "en": {"other": "Who composed the music of Heat (1995 film)?",
               "question": "Who directed Heat (1995 film)?",
               "answer": "Heat was directed by Michael Mann."},
        "zh": {"other": "电影《英雄》的配乐是谁创作的？", "question": "电影《英雄》是谁执导的？",
               "answer": "《英雄》由张艺谋执导。"},
    },
    BRIDGE_STEP: {
        "en": {"entity": "Michael Mann", "title_b": "Michael Mann",
               "text_b": "Michael Mann (born February 5, 1943) is an American director."},
        "zh": {"entity": "张艺谋", "title_b": "张艺谋",
               "text_b": "张艺谋，1950年出生于陕西西安，中国电影导演。"},
    },
    CLUE_STEP: {
        "en": {"entity": "Christopher Nolan", "title_a": "Inception", "subject": "Inception",
               "text_a": "Inception is a 2010 science fiction film written and directed by "
                         "Christopher Nolan."},
        "zh": {"entity": "陈凯歌", "title_a": "霸王别姬（电影）", "subject": "霸王别姬",
               "text_a": "《霸王别姬》是陈凯歌执导的剧情电影，于1993年上映。"},
    },
}
"""Step → language → the variables its golden prompt is rendered with
(tests/test_prompts_golden.py)."""


def focus_sentences(text: str) -> list[str]:
    """The sentences of a chunk a single-chunk draft may be about, in order: not a heading,
    and long enough to state a fact (its language's `focus_length`: four words; Chinese:
    eight characters)."""
    body = "\n".join(line for line in text.splitlines() if not _HEADING_LINE.match(line))
    return [s for s in split_sentences(body)
            if (lang := written_in(s)).length(s) >= lang.focus_length]


def context(settings: Settings, judge: JudgeClient, embeddings: EmbeddingStore | None,
            sample: Sample, language: str) -> MetricContext:
    """The context the metrics get, for one generation candidate: the same request, cache and
    parse path as a run's (`ctx.ask`), and faithfulness can run on it unchanged."""
    return MetricContext(sample=sample, language=language, settings=settings, judge=judge,
                         embeddings=embeddings)


def first_question(text: str) -> str:
    """Up to the first question mark: a small judge strings several questions together."""
    m = _QUESTION_END.search(text)
    return text[:m.end()].strip() if m else text.strip()


def without_questions(answer: str) -> str:
    """The answer less the questions it opens with (a small judge repeats the question)."""
    rest = answer.strip()
    while (m := _QUESTION_END.search(rest)) and m.end() < len(rest):
        head = rest[:m.end()]
        if any(mark in head for mark in ".。!！"):
            break
        rest = rest[m.end():].strip()
    return rest


def first_clause(text: str) -> str:
    """A search-box query up to its first comma, when what comes before says enough."""
    parts = _CLAUSE.split(text.strip(), maxsplit=1)
    head = parts[0].strip()
    lang = written_in(head)
    enough = lang.length(head) >= lang.query_length
    return head if len(parts) > 1 and enough else text.strip()


def without_unasked(question: str, answer: str) -> str:
    """The answer less its last clauses when they tell what the question did not ask (the small
    judge copies its sentence whole): a clause after a comma (English: one opening with who,
    which, when, making, each …; Chinese: any after ，or ；) holding none of the question's
    content words, cut while what is left still holds the kind of answer a rule knows the
    question asks for (answer_kind.answer_lacks). "When was the club founded?" → "The club was
    founded in 1962 by Walter Pryce, who started with six players …" → "… by Walter Pryce.";
    "江州博物馆建于哪一年？" → "江州博物馆建于一九五八年，二零一六年迁入……新馆。" → "江州博物馆建于
    一九五八年。". An answer to a question of no kind a rule knows is kept whole: "What is the
    temperature of the starter?" → "… flour and water, and keep it at about 24 degrees"."""
    text = answer.strip()
    if answer_lacks(question, "") is None or not text:  # no kind known: nothing to check by
        return answer
    lang = written_in(text)
    end = text[-1] if text[-1] in ".。!！" else lang.full_stop
    body = text.rstrip(".。!！")
    asked = {stem(w) for w in content_words(question)}
    cut = body
    while cuts := list(lang.tail.finditer(cut)):
        head, tail = cut[:cuts[-1].start()], cut[cuts[-1].end():]
        if {stem(w) for w in content_words(tail)} & asked or answer_lacks(question, head):
            break
        cut = head
    return answer if cut == body else cut.rstrip() + end


async def draft_single(ctx: MetricContext, text: str, focus: str, title: str = "") -> SingleDraft:
    """The drafts of one sentence (`focus`) of a chunk, shown with its document's title (a
    chunk that says "it" of its subject), tidied: one question each, the answer without echoed
    questions and without the clauses that tell what was not asked (`without_unasked`), the
    casual form up to its first comma."""
    raw = await ctx.ask(SINGLE_STEP, SingleDraft, text=text, focus=focus, title=title)
    return raw.model_copy(update={
        "question": first_question(raw.question),
        "answer": without_unasked(first_question(raw.question), without_questions(raw.answer)),
        "casual": first_clause(first_question(raw.casual)),
        "unanswerable": first_question(raw.unanswerable)})


async def rename(ctx: MetricContext, question: str, name: str) -> str:
    """The question rewritten by the judge to hold `name` (its subject), one question."""
    raw = await ctx.ask(RENAME_STEP, Renamed, question=question, name=name)
    return first_question(raw.question)


async def attempt(ctx: MetricContext, question: str, chunks: list[str]) -> str:
    """The judge's answer to `question` from `chunks` alone ("none"/"无" when they do not give
    it: answerable.declines), its first sentence: the small judge often copies a whole chunk."""
    raw = await ctx.ask(ATTEMPT_STEP, Attempt, question=question, context=chunks)
    return (split_sentences(raw.answer.strip()) or [""])[0].strip(" {}\"")


async def agrees(ctx: MetricContext, question: str, reference: str, answer: str) -> bool:
    """The judge finds that `answer` gives the reference answer's answer to `question`."""
    raw = await ctx.ask(AGREE_STEP, Agreed, question=question, reference=reference,
                        answer=answer)
    return raw.verdict == 1


async def answers_other(ctx: MetricContext, other: str, question: str, answer: str) -> bool:
    """The judge finds that a row's `question` and `answer` answer the question `other`."""
    raw = await ctx.ask(ANSWERS_STEP, Agreed, other=other, question=question, answer=answer)
    return raw.verdict == 1


async def draft_bridge(ctx: MetricContext, entity: str, text_a: str, text_b: str,
                       title_a: str = "", title_b: str = "", subject_a: str = "") -> BridgeDraft:
    """A bridge question: `entity`, named in text A, is the subject of text B. Two requests,
    each shown one text: the entity's role to A's subject `subject_a` ("director", from A:
    `generate_clue`), and a question about a fact of B that writes the entity's name, with
    its answer (`generate_bridge`); the name in the question is then written as the clue
    made of the role and the subject ("the director of Heat": `clue_of`, `by_clue`). The
    1.5B shown both texts and asked for the whole bridge wrote the entity's name in half its
    questions; asked for a clue, it described A's subject itself ("the stage musical with
    book, music and lyrics by …") or copied A's sentence."""
    role = Role(role="") if not subject_a else await ctx.ask(
        CLUE_STEP, Role, entity=entity, text_a=text_a, title_a=title_a, subject=subject_a)
    raw = await ctx.ask(BRIDGE_STEP, BridgeQuestion, entity=entity, text_b=text_b,
                        title_b=title_b)
    clue = clue_of(role.role, entity, subject_a, ctx.language)
    asked = first_question(raw.question)
    return BridgeDraft(role=role.role, clue=clue, asked=asked,
                       question=by_clue(asked, entity, clue),
                       answer=without_questions(raw.answer))


def clue_of(role: str, entity: str, subject: str, language: str) -> str:
    """The entity named by its role to A's subject: "the director of Heat", "英雄的导演"; ""
    when there is no subject, or the role is empty, longer than ROLE_WORDS words (Chinese:
    twice as many characters) or writes the entity or the subject (no role, but a sentence)."""
    role = re.sub(r"(?i)^(?:the|a|an)\s+", "", role.strip().rstrip(".。"))
    size = len(role.split()) if language == "en" else len(role.replace(" ", ""))
    limit = ROLE_WORDS if language == "en" else 2 * ROLE_WORDS
    if not subject or not role or size > limit or any(
            normalize(n) in normalize(role) for n in (entity, subject)):
        return ""
    return f"the {role} of {subject}" if language == "en" else f"{subject}的{role}"


def by_clue(question: str, entity: str, clue: str) -> str:
    """The question with the first whole occurrence of `entity` written as `clue` instead ("In
    which year was Leslie Bricusse born?" → "In which year was the composer and lyricist of
    Doctor Dolittle born?"). Unchanged when the clue is empty or writes the entity itself; a "the"
    before the name is dropped where the clue opens with an article, and a clue that opens the
    question is capitalised. The entity is also found by its other forms (picking.name_forms:
    "Robert Dudley" of "Robert Dudley, 1st Earl of Leicester"). English matches whole words,
    case aside; Chinese as written."""
    if not clue or normalize(entity) in normalize(clue):
        return question
    alternatives = "|".join(re.escape(n) for n in name_forms(entity))
    if entity.isascii():
        article = r"(?:\bthe\s+)?" if re.match(r"(?i)(?:the|a|an)\s", clue) else ""
        found = re.compile(rf"(?i){article}(?<![A-Za-z0-9])(?:{alternatives})(?![A-Za-z0-9])")
    else:
        found = re.compile(alternatives)
    out = found.sub(lambda m: clue, question, count=1)
    if out != question and out.startswith(clue) and clue[:1].islower():
        out = clue[:1].upper() + out[1:]
    return out
