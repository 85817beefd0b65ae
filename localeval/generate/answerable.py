"""Whether the corpus answers an "unanswerable" question, by rule: a sentence of the corpus
holding its words (`stated_in`), a nearby chunk rated as answering it (`ANSWERABLE_RATING`), and
the judge's own attempt that declines (`declines`). The judge's checks run in generate/tasks.py."""

from __future__ import annotations

from localeval.generate.filters import content_share
from localeval.generate.lang import LANGUAGES, written_in, zh
from localeval.generate.words import english_words
from localeval.text import CJK_RUN, normalize

ANSWERABLE_RATING = 2 / 3
"""An "unanswerable" question is dropped when a nearby chunk's rerank_relevancy rating reaches
this (2 of 3: it answers part of the question) — the reference answer would be wrong."""


def declines(answer: str) -> bool:
    """The judge's attempt at an answer says the texts do not give one ("none", "无",
    "The texts do not say …", "文中没有提到……")."""
    return not answer.strip() or any(lang.declines.search(answer) for lang in LANGUAGES.values())


STATED_SHARE = 0.75
"""An "unanswerable" question whose own words (less its question words) stand this much in one
sentence of the corpus is answered there (answerable): "新馆的建筑面积是多少平方米？" beside
"新馆……建筑面积三万二千平方米"; "What is the altitude of Hallam Hill Observatory above sea
level?" (3 of 4) beside "Hallam Hill Observatory sits at 1,140 metres above sea level", which
the 1.5B judge's checks passed at the default chunk size (0.8 before)."""


def stated_in(question: str, sentences: list[str],
              terms: frozenset[str] = frozenset()) -> tuple[float, str]:
    """The share of the question's own words (`content_share`, its question words and its
    subject `terms` left out) that stand in the sentence holding most of them, and that
    sentence. A question names its subject in full, a sentence seldom does: "江城地铁三号线的
    单程票价是多少元？" beside "单程票价按里程计算，起步价为两元". (1.0, "") for a question
    holding nothing but its subject ("围棋的规则与历史是什么？": what its document tells)."""
    asked = written_in(question).stated_asks.sub(" ", question)
    asked = without_terms(asked, terms)
    if not english_words(normalize(asked)) and not any(
            ch not in zh.FUNCTION for run in CJK_RUN.findall(asked) for ch in run):
        return 1.0, ""
    return max(((content_share(asked, [s]), s) for s in sentences), default=(0.0, ""))


def without_terms(text: str, terms: frozenset[str]) -> str:
    """The text less its subject terms: an English word whose key is a term's, a Chinese
    term (a character pair, or a whole name or title) wherever it stands, longest first."""
    for lang in LANGUAGES.values():  # each removes the terms written in it
        text = lang.without_terms(text, frozenset(t for t in terms if written_in(t) is lang))
    return text
