"""Per language, one module holding every word list, pattern, unit, question word and joiner
`generate` uses, and `LANGUAGE`, its `Language` record (record.py); the stages read the record,
never a language code.

A third language is one new file, `lang/<code>.py`, added to `LANGUAGES` below. It holds:
  - its data: a pattern of pointers to an unseen text (`pointers`), of vague questions
    (`vague`), of declined answers (`declines`), of question words (`stated_asks`,
    `point_asks`), of clause tails (`tail`); the reference answer of an unanswerable row
    (`no_answer`), its full stop, its month and weekday words (`never_subject`), its numeral
    characters (`numerals`), its placing words (`placing`), the prompt examples' names in it
    (`example_names`), its focus and query lengths;
  - its rules, each a small function: `asks`, `two_things`, `question_words`,
    `names_in_question`, `outside_names`, `length`, `answer_size`, `tells_many`,
    `answer_lacks` (with its units and kinds of answer), `casual`, `spoken`,
    `join_questions`, `join_answers`, `named`, `as_name`, `key` (its stemmer),
    `without_terms`, `entities`, `links`;
  - two flags: `spaced` (words stand between spaces) and `capitals` (names are capitalised
    words), which pick how subjects and content words are found;
and, where a text's script decides its rules (`written_in`), the test for its script. Its
prompts are prompts/<code>/generate_*.j2.
"""

from __future__ import annotations

from localeval.generate.lang import en, zh
from localeval.generate.lang.record import Language
from localeval.text import has_cjk

__all__ = ["EN", "LANGUAGES", "ZH", "Language", "language", "of_chunk", "written_in"]

EN, ZH = en.LANGUAGE, zh.LANGUAGE
LANGUAGES: dict[str, Language] = {"en": EN, "zh": ZH}


def language(code: str) -> Language:
    """The record of a language code ("en", "zh")."""
    return LANGUAGES[code]


def written_in(text: str) -> Language:
    """The language whose rules apply to a text by its script: Chinese when it holds a Chinese
    character (an English question naming Blålon is still English), else English."""
    return ZH if has_cjk(text) else EN


def of_chunk(code: str, text: str) -> Language:
    """The rules for a text of a chunk in `code`: the chunk's, unless its language is spaced and
    the text holds a Chinese character."""
    chunk = language(code)
    return written_in(text) if chunk.spaced else chunk
