"""The record every stage of `generate` reads of a language: its word lists, patterns, units
and the small rules that differ by language. One instance per language module (en.py, zh.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Language:
    """What `generate` knows of one language. Patterns are compiled; rules take the text they
    judge. `spaced`: words stand between spaces (English), else characters are compared in pairs
    (Chinese); `capitals`: names are capitalised words."""

    code: str
    spaced: bool
    capitals: bool
    no_answer: str
    """The reference answer of an "unanswerable" row."""
    full_stop: str
    """The mark an answer cut short ends with."""
    pointers: re.Pattern[str]
    """A pointer to a text the reader has not seen ("the passage", 文中): self_contained."""
    vague: re.Pattern[str]
    """A question asking for no one fact ("Describe …", 介绍): vague."""
    declines: re.Pattern[str]
    """A judge's attempt at an answer that says the texts give none: answerable.declines."""
    stated_asks: re.Pattern[str]
    """The question words left out of an "unanswerable" question before it is looked for in a
    sentence of the corpus: answerable.stated_in."""
    point_asks: re.Pattern[str] | None
    """The question words left out of a question's point (filters.off_point); None: none."""
    tail: re.Pattern[str]
    """Where a clause that may tell what was not asked opens: drafting.without_unasked."""
    asks: Callable[[str], bool]
    """The text is worded as a question (a question mark or not)."""
    two_things: Callable[[str], bool]
    """The question asks two things."""
    question_words: Callable[[str], set[str]]
    """What a question asks with, to compare two forms of it."""
    names_in_question: Callable[[str], list[str]]
    """The names a question holds beside its first word (filters.off_point)."""
    outside_names: Callable[[list[str]], list[str]]
    """Of the Latin words of a question, those that must stand in its chunks (names_outside)."""
    length: Callable[[str], int]
    """A text's length: words, or characters."""
    focus_length: int
    """A sentence a draft may be about is this long at least (`length`)."""
    query_length: int
    """A search-box query's first clause says enough from this long (`length`)."""
    answer_size: Callable[[str], float]
    """An answer's size in English words (filters.long_answer's ANSWER_WORDS)."""
    tells_many: Callable[[str], bool]
    """A one-chunk answer that tells more than one fact by its shape alone."""
    answer_lacks: Callable[[str, str, str], str | None]
    """(question, what the answer adds, the answer) → what kind of answer the question asks for
    that the answer lacks, or None: answer_kind.answer_lacks."""
    casual: Callable[[str, str], str]
    """(a question less its end mark, a key) → as a user types it (assemble.casual_form)."""
    spoken: Callable[[str], str]
    """A casual question as it is spoken (assemble.retype)."""
    join_questions: Callable[[str, str], str]
    """(the first question less its mark, the second) → one question."""
    join_answers: Callable[[str, str], str]
    """Two answers, one after the other."""
    named: Callable[[str, str], str]
    """(question, name) → a short form of the name in the question written in full."""
    as_name: Callable[[str], str]
    """A draft's subject as a name a question may be rewritten to hold, or ""."""
    key: Callable[[str], str]
    """A word as the rules compare it (English: its stem less a final e)."""
    without_terms: Callable[[str, frozenset[str]], str]
    """A text less the subject terms written in this language (answerable.stated_in)."""
    entities: Callable[[str], set[str]]
    """Candidate entities of a text (picking.terms)."""
    links: Callable[[str], bool]
    """A term that names one thing wherever it stands (picking.linking_name)."""
    never_subject: frozenset[str]
    """Words that never name a subject (months, weekdays)."""
    numerals: frozenset[str]
    """Characters of a number or date: a word holding one names no subject."""
    placing: frozenset[str]
    """Words a rewrite may add with a name that only place the question at its subject."""
    example_names: tuple[str, ...]
    """The names of the generation prompts' examples (prompts/*/generate_*.j2)."""
