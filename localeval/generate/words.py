"""Content words, as the generator's filters and subject rules compare texts: English words
less the function words (by stem where asked: `word_key`), Chinese character pairs. A text may
hold both scripts; each is read by its language's lists (lang/en.py, lang/zh.py)."""

from __future__ import annotations

from localeval.generate.lang import en, written_in, zh
from localeval.text import CJK_RUN, STOPWORDS, normalize

LATIN = en.WORD
stem = en.stem
_ZH_FUNCTION = set(zh.FUNCTION)


def english_words(norm: str) -> set[str]:
    """The English words and numbers of a normalized text less the function words."""
    return {w for w in LATIN.findall(norm) if w not in STOPWORDS and (len(w) > 1 or w.isdigit())}


def content_words(text: str) -> set[str]:
    """English words and numbers less the function words, and Chinese character bigrams (a
    lone character of a run, when it is not a function word): what a text says, to compare."""
    norm = normalize(text)
    words = english_words(norm)
    for run in CJK_RUN.findall(norm):
        run = "".join(ch for ch in run if ch not in _ZH_FUNCTION) or run
        if len(run) == 1:
            words.add(run)
        words.update(run[i:i + 2] for i in range(len(run) - 1))
    return words


def word_key(word: str) -> str:
    """A word as the generator's rules compare it (names_subject, the filters): by its
    language's `key` (an English word's stem less a final e, a Chinese one as it is)."""
    return written_in(word).key(word)
