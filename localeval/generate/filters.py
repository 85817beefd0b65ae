"""The quality filters a candidate question passes before it is kept: self-contained, the
answer not already in the question, supported (the faithfulness verdict path, at τ), and not a
near-duplicate of a kept question (embedder cosine). Also the content words that the report
checks against the reference chunks."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from localeval.generate import KINDS
from localeval.generate.answer_kind import answer_lacks
from localeval.generate.lang import LANGUAGES, written_in, zh
from localeval.generate.picking import name_forms
from localeval.generate.subjects import names_subject
from localeval.generate.words import LATIN, content_words, english_words, stem, word_key
from localeval.text import CJK_RANGES, CJK_RUN, normalize, split_sentences

FILTERS = ("judge_error", "not_a_question", "self_contained", "two_things", "vague",
           "unnamed_subject",
           "names_outside", "answer_in_question", "asks_otherwise", "long_answer", "unsupported",
           "loose_clue", "one_chunk_suffices", "unanswered", "unverified", "answerable",
           "duplicate", "surplus")
"""Why a candidate was dropped, in the order the filters run (the report's columns):
judge_error (the judge gave no usable draft), not_a_question (no question mark at its end; not
worded as a question: no question word or auxiliary, or an English keyword string with no
function word; a colloquial row must still ask),
self_contained (the question points at "the passage"), two_things (it asks two things: two
question words, or a list), vague (it asks what something is about, or to describe it: no
one fact), unnamed_subject (it names none of its document's subject terms, nor does the
judge's rewrite naming it, tasks.renamed: "Who won?"), names_outside (the question names
something its chunks never mention: a small judge copies the prompt's example),
answer_in_question (the answer says nothing the question does not; a colloquial row: it holds
words of the answer its single question lacks),
asks_otherwise (a colloquial row asks with another question word than its single question:
"how long" for "when"), long_answer (the reference answer is longer than an answer needs,
copies most of its chunk, or was cut at the schema's length),
unsupported (the reference chunks do not support the reference answer), loose_clue (a bridge has
no clue: the judge's role of its entity to the first document's subject is no short phrase,
or writes the entity or the subject, or the first document names no subject; or the first
chunk writes the entity in a list, `listed`, so the role fits several), one_chunk_suffices (a
pair joins two questions that ask the same, or one of its chunks supports both answers; a
bridge names its entity, or the judge answers it from one of its chunks alone),
unanswered (the answer is of another kind than the question asks, `answer_lacks`, or does not
give every part of it: answer_relevance's parts and coverage verdicts, P below ANSWERED_P for
a part the question asks, `asked_parts`),
unverified (the judge, answering the question blind from the corpus's top chunks by BM25 (a
bridge: from its two chunks), declines or gives another answer than the reference answer,
its yes/no verdict: tasks.blind),
answerable (an "unanswerable" question whose own words stand in one sentence of the corpus,
STATED_SHARE, or that one of the chunks of the whole corpus nearest to it, by BM25 and by the
embedder, answers in part or whole: rerank_relevancy rates it 2 or 3, or the judge answers it
from them with an answer of the kind asked that faithfulness finds supported; or that a kept
answerable row answers, the judge's yes/no: tasks.contradicted), duplicate (a
near-duplicate of a kept question), surplus (more than --n passed)."""

_ZH_FUNCTION = set(zh.FUNCTION)
ANSWERED_P = 0.5
"""The least P(the reference answer gives it) of every part of its question (unanswered)."""
PART_SHARE = 0.75
"""A part answer_relevance finds in a question counts when this share of its content words
stand in the question (`asked_parts`)."""
ANSWER_WORDS = {"single": 25, "pair": 50}
"""Most words (English) an answer of the kind may have; Chinese: twice as many characters."""
COPIED_SHARE = 0.75
"""An answer holding this share of its chunk's content words copies the chunk (single)."""


def self_contained(question: str) -> bool:
    """No pointer to a text the reader has not seen ("the passage", "this document", 文中,
    本文 ...)."""
    return not any(lang.pointers.search(question) for lang in LANGUAGES.values())


def two_things(question: str) -> bool:
    """It asks two things: two question words ("When and where ...", "什么时候……多少"), or a
    list (two commas; 分别, or two 、 in Chinese), or (Chinese) it asks and then states: its
    question word stands in a clause before its last ("云岭茶园做青需要多久，老师傅根据香气判断
    火候？"; a condition before the question is one thing: "……旺季时，周末常常需要排队多久？")."""
    return written_in(question).two_things(question)


def vague(question: str) -> bool:
    """It asks for no one fact: "What is Vatnfell Glacier about?", "Describe …", "介绍一下…",
    "……怎么样？"."""
    return any(lang.vague.search(question.strip()) for lang in LANGUAGES.values())


def restates(question: str, asked: str) -> bool:
    """`question` asks no more than `asked`: it has no content word `asked` lacks."""
    words = content_words(question)
    return words <= content_words(asked)


def long_answer(answer: str, chunks: list[str], kind: str, cut_at: int) -> bool:
    """Longer than an answer needs (over ANSWER_WORDS words; Chinese: twice as many
    characters, or zh.CLAUSES clauses: "青琅湖……湖面海拔两千一百米，面积约六十八平方公里，最深处
    达九十三米" for its height), cut at the schema's length `cut_at`, or (one chunk) copying
    COPIED_SHARE of its chunk's content words."""
    limit = ANSWER_WORDS.get(kind, ANSWER_WORDS["single"])
    lang = written_in(answer)
    if lang.answer_size(answer) > limit or len(answer) >= cut_at:
        return True
    if kind != "pair" and lang.tells_many(answer):
        return True  # a Chinese sentence copied whole: one fact asked, three told
    if len(chunks) == 1:
        mine = content_words(chunks[0])
        return bool(mine) and len(content_words(answer) & mine) >= COPIED_SHARE * len(mine)
    return False


def names_entity(question: str, entity: str) -> bool:
    """A bridge question that writes the entity it should name only by its clue: the whole
    name, or (English) one of its capitalised words of four letters or more ("Mann" of
    "Michael Mann")."""
    if normalize(entity) in normalize(question):
        return True
    words = {w for w in re.findall(r"[A-Z][A-Za-z'’-]{3,}", entity)} - {"The"}
    return bool(words & set(re.findall(r"[A-Za-z'’-]+", question)))


_NAME = r"[A-Z][\w'’.-]*(?:\s+[A-Z][\w'’.-]*)*"
_LIST = re.compile(rf"{_NAME}(?:,\s+{_NAME})*,?\s+(?:and|or)\s+{_NAME}"
                   r"|[\u4e00-\u9fff]+(?:、[\u4e00-\u9fff]+)+")
"""A list of names: English closed by "and" / "or" ("Justin Long, Matthew Gray Gubler, and
Jesse McCartney"; "Freeport, New York" is none), Chinese joined by 、."""


def listed(text: str, entity: str) -> bool:
    """The text writes the entity as one name of a list ("The voice cast includes Cate
    Blanchett, …, Diane Kruger, Connie Nielsen, Josh Radnor and Gustaf Skarsgård"; 张三、李四):
    its role there is shared, so a bridge's clue ("the voice cast member of …") fits several."""
    forms = name_forms(entity)
    for m in _LIST.finditer(text):
        items = re.split(r",\s+|,?\s+(?:and|or)\s+|、", m.group())
        if any(item.strip() == form or (not form.isascii() and form in item)
               for item in items for form in forms):
            return True
    return False


def is_question(text: str) -> bool:
    return text.rstrip().endswith(("?", "？"))


def asks(text: str) -> bool:
    """Worded as a question (question mark or not): English opens with a question word, an
    auxiliary or a preposition before one ("In which year ...") and is no keyword string;
    Chinese holds a question word (什么, 哪, 多少, 几, 谁, 如何 ...) or ends in 吗/呢."""
    return written_in(text).asks(text)


def question_words(text: str) -> set[str]:
    """What a question asks with: English its question word ("how" with the word after it:
    "how long", "how many"), or its first word when it opens with an auxiliary; Chinese its
    question words (啥 as 什么, 如何 as 怎么, 呢 as 吗)."""
    return written_in(text).question_words(text)


def asks_otherwise(casual: str, question: str) -> bool:
    """A colloquial form that asks with other question words than its single question: it
    asks another thing ("how long did it take …" for "When was … rebuilt?")."""
    return question_words(casual) != question_words(question)


def adds_answer(casual: str, question: str, answer: str) -> list[str]:
    """The answer's content words that the colloquial form holds and its single question does
    not: a "question" that states its answer ("石鼓书院门票四十元")."""
    extra = content_words(answer) - content_words(question)
    return sorted(extra & content_words(casual))


def changes_words(casual: str, question: str, chunk: str) -> list[str]:
    """English words of a colloquial form that neither its single question nor its chunk holds
    (by stem): "malawi" in the judge's casual form of "… rescued by French special forces in
    Mali?" asks of another country. A typo of the form's own is made later (casual_form)."""
    known = {word_key(w) for w in content_words(f"{question} {chunk}")}
    return sorted({w for w in english_words(normalize(casual)) if word_key(w) not in known})


def names_outside(question: str, texts: list[str]) -> list[str]:
    """Capitalised words of the question (not its first word) and Latin words of a Chinese
    question that no text mentions (case-insensitive; a possessive as its noun: "Club's")."""
    material = normalize(" ".join(texts))
    words = [re.sub(r"['’]s$", "", w) for w in re.findall(r"[A-Za-z][A-Za-z0-9'’-]*", question)]
    words = written_in(question).outside_names(words)  # English: capitalised, after the first
    return [w for w in dict.fromkeys(words) if normalize(w) not in material]


RENAME_DROPS = 2
"""Content words of a question its rewrite to name the subject may lose (Chinese: one
character's two pairs, "湖中" of "湖中特有的鱼类是什么？" → "青琅湖特有的鱼类是什么？")."""
RENAME_ADDS = 1
"""Content words a rewrite may add beside the name ("run" of "… the tournament run by the
Alder Street Chess Club?"), none of them the answer's."""


def same_question(question: str, rewrite: str, name: str, answer: str | None) -> bool:
    """A rewrite that names the subject asks what the question asked: the same question words,
    at most RENAME_ADDS content words that neither the question nor the name holds and none
    of the answer's (English by stem), and at most RENAME_DROPS of the question's lost."""
    rest = rewrite
    for form in (name, re.sub(r"^the\s+", "", name, flags=re.IGNORECASE)):
        rest = re.sub(re.escape(form), " ", rest, flags=re.IGNORECASE)
    before = {word_key(w) for w in content_words(question)}
    after = {word_key(w) for w in content_words(rewrite)}
    added = {word_key(w) for w in content_words(rest)} - before
    told = {word_key(w) for w in content_words(answer or "")}
    return question_words(rewrite) == question_words(question) and len(added) <= RENAME_ADDS \
        and not added & told and len(before - after) <= RENAME_DROPS


_ATTACHING = frozenset().union(*(lang.placing for lang in LANGUAGES.values()))
"""Words a rewrite may add with the name that only place the question at its subject."""


def only_places(question: str, rewrite: str, name: str) -> bool:
    """The rewrite is the question with the name put in (after of/at/in/on …, or for a short
    form of it) and nothing else changed: their words less the name's and those placing words
    are the same, in order. "When did the comet pass closest to the Sun?" → "… to the Sun at
    Hallam Hill Observatory?" only places it; "When was Holm Island rebuilt?" → "When was Holm
    Island rebuilt by Kestrel Bay Ferry?" (the 1.5B judge) says who rebuilt it."""
    def tokens(text: str) -> list[str]:  # Chinese characters, English words
        return re.findall(rf"[{CJK_RANGES}]|[a-z0-9]+", normalize(text))

    placing = set(tokens(name)) | _ATTACHING
    return [w for w in tokens(rewrite) if w not in placing] == \
        [w for w in tokens(question) if w not in placing]


IN_QUESTION_SHARE = 0.9
"""An answer this much of whose content words (`content_share`) its question holds says
nothing the question does not."""


def answer_in_question(question: str, answer: str) -> bool:
    """The answer says nothing the question does not: IN_QUESTION_SHARE of its content words
    are there ("为了保护水质，青琅湖边的二十多家客栈在二零一八年全部接入污水处理管网吗？"
    answered "二十多家客栈接入污水处理管网", whose pair 栈接 the question lacks)."""
    words = content_words(answer)
    return not words or words <= content_words(question) or \
        content_share(answer, [question]) >= IN_QUESTION_SHARE


def content_share(answer: str, texts: list[str]) -> float:
    """The share of the answer's content words that stand in the texts (1.0: no word): an
    English word or number when its stem does ("runs" for "run"); a Chinese character (not a
    function character) when a bigram of the answer holding it does — Chinese has no word
    breaks, so "京沪高速铁路全长" stands in "京沪高速铁路，全长" though "路全" does not."""
    norm = normalize(answer)
    words = english_words(norm)
    material = [normalize(t) for t in texts]
    stems = {stem(w) for t in material for w in LATIN.findall(t)}
    pairs = {run[i:i + 2] for t in material for run in CJK_RUN.findall(t)
             for i in range(len(run) - 1)}
    found = sum(stem(w) in stems for w in words)
    total = len(words)
    for run in CJK_RUN.findall(norm):
        for i, ch in enumerate(run):
            if ch in _ZH_FUNCTION and len(run) > 1:
                continue
            total += 1
            found += run[max(0, i - 1):i + 1] in pairs or run[i:i + 2] in pairs or (
                len(run) == 1 and any(ch in t for t in material))
    return found / total if total else 1.0


def asked_parts(parts: list[dict[str, Any]], question: str) -> list[dict[str, Any]]:
    """The parts (answer_relevance's, {"part", "p_answered"}) the question asks: PART_SHARE of
    their content words in it (all of them when none is). The 1.5B judge adds parts no one
    asked: "What was the outcome of the construction?" of "How long did it take to build the
    Severn Gate Bridge?", which dropped its answer "Construction took four years" (P 0.28)."""
    return [p for p in parts if content_share(p["part"], [question]) >= PART_SHARE] or parts


def off_point(question: str, answer: str, chunks: list[str], terms: set[str]) -> str:
    """A sentence of the chunk about the question's point, when the answer tells another fact:
    the point is the question's content words less its names and subject terms ("made" of
    "What is the Severn Gate Bridge made of?"; English words compared by stem); the answer
    shares none of them, and the sentence holds two of them (every one of fewer) and no word
    of the answer ("How many people cross the bridge daily on average?" answered with the
    tolls, beside "About 71,000 vehicles cross the bridge on an average day"). "" when the
    answer is on the point, or no sentence is about it (a paraphrase: "How tall is it?" of
    "It rises 137 metres")."""
    lang = written_in(question)
    named = " ".join(lang.names_in_question(question))
    point = lang.point_asks.sub(" ", question) if lang.point_asks else question
    asked = {word_key(w) for w in content_words(point)} - {
        word_key(w) for w in terms | content_words(named)}
    told = {word_key(w) for w in content_words(answer)}
    if not asked or asked & told:
        return ""
    for sentence in split_sentences(" ".join(chunks)):
        there = {word_key(w) for w in content_words(sentence)}
        if len(asked & there) >= min(POINT_WORDS, len(asked)) and not there & told:
            return sentence
    return ""


POINT_WORDS = 2
"""Words of a question's point that a sentence of its chunk holds to be about that point."""


@dataclass(frozen=True)
class Check:
    """What the cheap filters read of one candidate question: its kind, the question, its
    reference answer (None: an unanswerable question, whose answer is fixed), its chunks'
    texts, the subject terms of its documents (`subject_terms`), the schema's answer length
    `cut_at`, and the content words of its documents' titles (`titled`: shown to the judge
    beside the chunk, "bridge" of "The Severn Gate Bridge", which a question may name though
    its chunk does not)."""

    kind: str
    question: str
    answer: str | None
    chunks: tuple[str, ...]
    terms: frozenset[str]
    cut_at: int
    titled: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Drop:
    """A filter's verdict against a candidate, with its detail (the dropped file's `detail`)."""

    detail: object = None


QUESTION, CHUNKS, ANSWER, JUDGE = "question", "chunks", "answer", "judge"
"""What a filter needs: the question alone; its chunks and its documents' subject; the
reference answer (with its chunks); the judge (or the embedder, or the kept rows)."""
ALL = frozenset(KINDS)
ANSWERED = ALL - {"unanswerable"}


@dataclass(frozen=True)
class Filter:
    """One row of the filter table: the report's column it counts under (`name`), the kinds
    of row it applies to, what it needs, its check (a cheap filter's: `Check` → `Drop` or None;
    None for a filter applied by a later step, `where`), and the test that shows it."""

    name: str
    kinds: frozenset[str]
    needs: str
    check: Callable[[Check], Drop | None] | None
    test: str
    where: str = "filters.first_failed"


def _outside(c: Check) -> Drop | None:
    outside = [w for w in names_outside(c.question, list(c.chunks))  # its document's own names
               if not content_words(w) <= c.terms | c.titled]  # may stand outside its chunk
    return Drop(outside) if outside else None


def _copied(c: Check) -> Drop | None:
    copied = (content_words(c.question) & EXAMPLE_NAMES) - content_words(" ".join(c.chunks))
    return Drop(sorted(copied)) if copied else None


def _lacks(c: Check) -> Drop | None:
    lacks = answer_lacks(c.question, c.answer or "")
    return Drop(lacks) if lacks else None


def _off_point(c: Check) -> Drop | None:
    point = off_point(c.question, c.answer or "", list(c.chunks), set(c.terms))
    return Drop({"told elsewhere": point}) if point else None


def _when(fails: Callable[[Check], bool], detail: object = None) -> Callable[[Check], Drop | None]:
    return lambda c: Drop(detail) if fails(c) else None


TABLE: tuple[Filter, ...] = (
    Filter("judge_error", ALL, JUDGE, None, "test_a_judge_failure_in_a_check_is_counted_named_"
           "and_the_others_go_on", "assemble (a task's error)"),
    Filter("not_a_question", ALL - {"colloquial"}, QUESTION,
           _when(lambda c: not is_question(c.question)), "test_filters_drop_and_are_counted"),
    Filter("not_a_question", ALL, QUESTION,
           _when(lambda c: not asks(c.question), "not worded as a question"),
           "test_questions_must_be_worded_as_questions_and_colloquial_ones_not_"
           "state_the_answer"),
    Filter("self_contained", ALL, QUESTION, _when(lambda c: not self_contained(c.question)),
           "test_self_contained_and_answer_in_question"),
    Filter("two_things", ALL - {"pair"}, QUESTION,  # a pair joins two questions
           _when(lambda c: two_things(c.question)),
           "test_questions_asking_two_things_or_naming_no_subject_are_caught"),
    Filter("vague", ALL, QUESTION, _when(lambda c: vague(c.question)),
           "test_a_question_asking_for_no_one_fact_is_vague"),
    Filter("unnamed_subject", ALL, CHUNKS,
           _when(lambda c: not names_subject(c.question, set(c.terms))),
           "test_a_question_naming_no_subject_is_rewritten_to_name_it"),
    Filter("names_outside", ALL, CHUNKS, _outside,
           "test_questions_naming_what_their_chunk_lacks_or_not_asking_are_caught"),
    Filter("names_outside", ALL, CHUNKS, _copied,
           "test_long_or_copied_or_cut_answers_and_example_names_are_caught"),
    Filter("answer_in_question", ANSWERED, ANSWER,
           _when(lambda c: answer_in_question(c.question, c.answer or "")),
           "test_self_contained_and_answer_in_question"),
    Filter("unanswered", ANSWERED, ANSWER, _lacks,
           "test_an_answer_of_another_kind_than_its_question_is_caught"),
    Filter("unanswered", ANSWERED - {"pair", "bridge"}, ANSWER, _off_point,
           "test_an_answer_telling_another_fact_of_its_chunk_is_unanswered"),
    Filter("long_answer", ANSWERED, ANSWER,
           lambda c: Drop(len(c.answer or "")) if long_answer(
               c.answer or "", list(c.chunks), c.kind, c.cut_at) else None,
           "test_long_or_copied_or_cut_answers_and_example_names_are_caught"),
    Filter("answer_in_question", frozenset({"colloquial"}), ANSWER, None,
           "test_a_colloquial_draft_that_states_its_answer_gives_way_to_its_question_retyped",
           "assemble.from_single (adds_answer: words of the answer its single question lacks)"),
    Filter("asks_otherwise", frozenset({"colloquial"}), QUESTION, None,
           "test_a_colloquial_form_must_ask_with_its_single_question_s_words",
           "assemble.from_single (against its single question)"),
    Filter("names_outside", frozenset({"colloquial"}), CHUNKS, None,
           "test_a_colloquial_form_writing_a_word_its_question_and_chunk_lack_is_retyped",
           "assemble.from_single (changes_words: an English word neither its single question "
           "nor its chunk holds)"),
    Filter("unsupported", ANSWERED, JUDGE, None, "test_filters_drop_and_are_counted",
           "tasks.supported (faithfulness at τ), assemble"),
    Filter("loose_clue", frozenset({"bridge"}), CHUNKS, None,
           "test_a_bridge_whose_clue_is_not_the_link_is_dropped",
           "assemble.bridge_failed (drafting.clue_of: no clue; filters.listed)"),
    Filter("one_chunk_suffices", frozenset({"pair", "bridge"}), JUDGE, None,
           "test_filters_drop_and_are_counted", "tasks.pair_task, tasks.bridge_task, "
           "assemble.from_pair, assemble.from_bridge"),
    Filter("unanswered", ANSWERED, JUDGE, None,
           "test_an_answer_that_misses_part_of_its_question_is_dropped",
           "tasks.answers_every_part, assemble"),
    Filter("unverified", ANSWERED, JUDGE, None,
           "test_a_row_the_judge_answers_otherwise_blind_is_unverified",
           "tasks.blind (answered from the corpus's top BM25 chunks; yes/no), assemble"),
    Filter("answerable", frozenset({"unanswerable"}), JUDGE, None,
           "test_an_unanswerable_question_a_chunk_answers_in_part_is_dropped",
           "tasks.single_task, assemble.from_single"),
    Filter("duplicate", ALL, JUDGE, None, "test_near_duplicates_are_dropped",
           "assemble.assemble (embedder cosine)"),
    Filter("surplus", ALL, JUDGE, None, "test_drafting_stops_at_n_kept_or_at_max_drafts",
           "assemble.assemble (--n)"),
)
"""Every filter, in the order it applies; those with a check are the cheap ones (no judge),
walked in this order by `first_failed`. A candidate is counted under the first it fails."""
CHEAP = tuple(f for f in TABLE if f.check is not None)


def first_failed(kind: str, question: str, answer: str | None, chunks: list[str],
                 terms: set[str], cut_at: int, titled: frozenset[str] = frozenset()
                 ) -> tuple[str, object] | None:
    """The first cheap filter (no judge) a candidate fails, with its detail, or None (`Check`
    says what each argument is). Each candidate is walked once: the same check asked again
    (tasks decides the judge's work by it, assemble builds the rows by it) is answered from
    the first walk."""
    return _walk(Check(kind, question, answer, tuple(chunks), frozenset(terms), cut_at,
                       frozenset(titled)))


@lru_cache(maxsize=4096)
def _walk(check: Check) -> tuple[str, object] | None:
    for f in CHEAP:
        if check.kind in f.kinds and (f.needs != ANSWER or check.answer is not None) and \
                (dropped := f.check(check)) is not None:  # type: ignore[misc]
            return f.name, dropped.detail
    return None


EXAMPLE_NAMES = frozenset().union(*(content_words(t) for lang in LANGUAGES.values()
                                     for t in lang.example_names))
"""The names of the generation prompts' examples (prompts/*/generate_*.j2): a question naming
one its chunks lack copies the example (names_outside)."""
