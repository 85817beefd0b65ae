"""The quality filters a candidate question passes before it is kept: self-contained, the
answer not already in the question, supported (the faithfulness verdict path, at τ), and not a
near-duplicate of a kept question (embedder cosine). Also the content words that the report
checks against the reference chunks."""

from __future__ import annotations

import re

from localeval.text import STOPWORDS, normalize

FILTERS = ("judge_error", "not_a_question", "self_contained", "names_outside",
           "answer_in_question", "unsupported", "answerable", "duplicate", "surplus")
"""Why a candidate was dropped, in the order the filters run (the report's columns):
judge_error (the judge gave no usable draft), not_a_question (no question mark at its end),
self_contained (the question points at "the passage"), names_outside (the question names
something its chunks never mention: a small judge copies the prompt's example),
answer_in_question, unsupported (the reference chunks do not support the reference answer),
answerable (an "unanswerable" question one of its nearest chunks answers directly:
rerank_relevancy rates it 3), duplicate (a near-duplicate of a kept question), surplus (more
than --n passed)."""

_EN_POINTERS = re.compile(
    r"\b(?:(?:the|this|that|these|above|given|following|provided|said|same)\s+"
    r"(?:passage|text|document|article|paragraph|excerpt|context|section|chunk|snippet|"
    r"source|story|report)s?|according to the (?:author|writer)|mentioned (?:above|here|"
    r"earlier)|described above|the author)\b", re.IGNORECASE)
_ZH_POINTERS = re.compile(r"文中|本文|文章中|上文|该文|这段|本段|此段|段落中|文本中|原文|上述|"
                          r"材料中|资料中|根据以上|以上内容|这篇|该段|文字中|这两段|两段文字")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_LATIN = re.compile(r"[a-z0-9]+(?:[.'’-][a-z0-9]+)*")
_ZH_FUNCTION = set("的了是在和与及或等也都就而被把从对为于以之其这那个些吗呢吧啊")


def self_contained(question: str) -> bool:
    """No pointer to a text the reader has not seen ("the passage", "this document", 文中,
    本文 ...)."""
    return not (_EN_POINTERS.search(question) or _ZH_POINTERS.search(question))


def is_question(text: str) -> bool:
    return text.rstrip().endswith(("?", "？"))


def names_outside(question: str, texts: list[str]) -> list[str]:
    """Capitalised words of the question (not its first word) and Latin words of a Chinese
    question that no text mentions (case-insensitive)."""
    material = normalize(" ".join(texts))
    words = re.findall(r"[A-Za-z][A-Za-z0-9'’-]*", question)
    if question.isascii():  # English: the capitalised words after the first
        words = [w for w in words[1:] if w[0].isupper()]
    return [w for w in dict.fromkeys(words) if normalize(w) not in material]


def content_words(text: str) -> set[str]:
    """English words and numbers less the function words, and Chinese character bigrams (a
    lone character of a run, when it is not a function word): what a text says, to compare."""
    norm = normalize(text)
    words = {w for w in _LATIN.findall(norm) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())}
    for run in _CJK_RUN.findall(norm):
        run = "".join(ch for ch in run if ch not in _ZH_FUNCTION) or run
        if len(run) == 1:
            words.add(run)
        words.update(run[i:i + 2] for i in range(len(run) - 1))
    return words


def answer_in_question(question: str, answer: str) -> bool:
    """The answer says nothing the question does not: every content word of it is there."""
    words = content_words(answer)
    return not words or words <= content_words(question)


def content_share(answer: str, texts: list[str]) -> float:
    """The share of the answer's content words that stand in the texts (1.0: no word)."""
    words = content_words(answer)
    if not words:
        return 1.0
    found = set().union(*(content_words(t) for t in texts)) if texts else set()
    return len(words & found) / len(words)
