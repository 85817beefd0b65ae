"""Text as the package reads it, in Chinese and English: language, sentences, the forms texts are
matched in, and their content terms and numbers (one implementation of each, used everywhere).

A text the metrics compare is cut into sentences once (`sentences_of`): its `Sentences` carry
the sentences, their match keys and their content terms, and every step is handed that
structure rather than splitting again."""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field

CJK_RANGES = "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
"""The CJK ideographs (Extension A, the unified block, the compatibility ideographs), as a
regex character-class body: what counts as a Chinese character everywhere."""
CJK = re.compile(f"[{CJK_RANGES}]")
"""One Chinese character (CJK_RANGES)."""
CJK_RUN = re.compile(f"[{CJK_RANGES}]+")
"""A run of Chinese characters."""


def has_cjk(text: str) -> bool:
    """The text holds a Chinese character: Chinese rules apply to it, not English ones (an
    English question naming Blålon or Tomáš Hrubý is no ASCII, and still English)."""
    return CJK.search(text) is not None

_JOINS_TIGHT = re.compile(r"[\u2e80-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef]$")
"""A text ending in CJK script or CJK punctuation (radicals, 。 and 、, kana, ideographs,
full-width forms; not Hangul, which spaces its words) takes no space before the next one."""
_ASCII_LETTERS = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

# Abbreviations whose trailing dot does not end an English sentence.
_ABBREV = {
    "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "inc", "ltd",
    "co", "corp", "no", "fig", "al", "approx", "dept", "est", "u.s", "u.k", "jan", "feb", "mar",
    "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "mt", "gen", "gov", "col",
    "a.m", "p.m", "ph.d", "vol", "pp", "cf", "ca", "rev", "sgt", "capt", "lt", "ave", "blvd",
}
_BULLET = re.compile(
    r"^\s*(?:[-*•·●▪](?=\s)|\d{1,3}(?:[.)](?=\s)|、)|[（(]\d{1,3}[)）]|[一二三四五六七八九十]+、)\s*")
# A sentence ends after 。！？；… (plus closing quotes/brackets), or after .!? followed by space.
_ZH_END = re.compile(r"([。！？；!?;]|…+|\.{3,})([”’」』）)\]]*)")
_EN_END = re.compile(r"([.!?]+)([\"'”’)\]]*)(?=\s+|$)")
# Sentences run together without a space ("in 2011.The album"): a '.' after two lower-case
# letters or digits and before a capitalised word ends a sentence too.
_GLUED = re.compile(r"(?<=[a-z0-9]{2})([.!?])(?=[A-Z][a-z])")
_PUNCT_OR_SPACE = re.compile(r"[\W_]+")
STOPWORDS = frozenset({
    "a", "an", "the", "and", "or", "but", "of", "in", "on", "at", "to", "for", "from", "by",
    "with", "as", "is", "are", "was", "were", "be", "been", "being", "it", "its", "this", "that",
    "these", "those", "he", "she", "they", "them", "his", "her", "their", "there", "here",
    "which", "who", "whom", "whose", "what", "when", "where", "why", "how", "not", "no", "also",
    "than", "then", "so", "such", "very", "more", "most", "into", "onto", "about", "over",
    "under", "after", "before", "during", "while", "if", "because", "has", "have", "had", "do",
    "does", "did", "can", "could", "will", "would", "should", "may", "might", "must", "shall",
})
"""English function words: left out when texts are compared by their content words."""


def detect_language(*texts: str | None) -> str:
    """'zh' if CJK characters make up a fair share of the text, else 'en'."""
    cjk = sum(_cjk_count(t) for t in texts if t)
    latin = sum(_latin_letters(t) for t in texts if t) / 4  # ~4 letters per word
    return "zh" if cjk and cjk >= latin * 0.5 else "en"


def _cjk_count(text: str) -> int:
    """CJK characters of the text, counted run by run (no list of every character)."""
    return 0 if text.isascii() else sum(m.end() - m.start() for m in CJK_RUN.finditer(text))


def _latin_letters(text: str) -> int:
    """ASCII letters of the text: bytes deleted in C, not a list of words (a 50 MB answer once
    made a list of 8 million words, 460 MB)."""
    data = text.encode("utf-8", "surrogatepass")
    return len(data) - len(data.translate(None, _ASCII_LETTERS))


_WORD = re.compile(r"[A-Za-z0-9]+(?:[.'’-][A-Za-z0-9]+)*")
_WORDISH = re.compile(r"[A-Za-z0-9.'’-]*")  # what a word may run through: no cut inside it
_SPACE = re.compile(r"\s")  # as str.split() splits
SPAN = 1 << 16


def _spans(text: str) -> list[tuple[int, int]]:
    """(start, end) pieces of about SPAN characters, cut where no word runs, so that counting
    piece by piece lists at most one piece's matches at a time (a 50 MB answer once took 17
    times its size as one list of words)."""
    out, start = [], 0
    while start < len(text):
        end = min(len(text), start + SPAN)
        end = _WORDISH.match(text, end).end() if end < len(text) else end
        out.append((start, end))
        start = end
    return out


def word_count(text: str) -> float:
    """Latin words plus CJK characters × 2/3 (a Chinese word is about 1.5 characters)."""
    latin = sum(len(_WORD.findall(text, a, b)) for a, b in _spans(text))
    return latin + _cjk_count(text) * 2 / 3


def non_space_count(text: str) -> int:
    """Characters other than whitespace (as str.split() counts it), without a copy of the text."""
    return len(text) - sum(len(_SPACE.findall(text, a, b)) for a, b in _spans(text))


def join_sentences(sentences: Iterable[str]) -> str:
    """Sentences written as one text: a space between two, except after one that ends in CJK
    script or punctuation ("它在巴黎。它建于1889年。", "It is in Paris. It was built in 1889.")."""
    out = ""
    for sentence in sentences:
        out += sentence if not out or _JOINS_TIGHT.search(out) else " " + sentence
    return out


def no_space_after(text: str) -> bool:
    """Whether the next sentence of the same source follows `text` with no space, where the
    passages of a long context and the pieces of a material are joined back: after any
    character above U+2E80. Broader than `join_sentences` (it also joins after Hangul or an
    emoji) and kept so: those texts are in the judge's prompts, which key its cached answers."""
    return bool(text) and ord(text[-1]) > 0x2E80


def normalize(text: str) -> str:
    """NFKC (full→half width), casefold, collapse whitespace: for matching, never for display."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def repeat_key(text: str) -> str:
    """The text with its whitespace collapsed, nothing else changed: two sentences are one
    repeated only when their keys are equal ("2.5 mg" and "25 mg", "-40" and "40" differ)."""
    return " ".join(text.split())


def match_key(text: str) -> str:
    """`normalize`, then every punctuation mark and space removed: the form in which a quoted
    span is looked up in its source ("U.S.", "U. S." and "us" all become "us")."""
    return _PUNCT_OR_SPACE.sub("", unicodedata.normalize("NFKC", text).casefold())


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3})")


def numbers(text: str) -> set[str]:
    """The numbers a text writes in digits (NFKC: full-width digits too), thousands separators
    removed: "1,200" and "１２００" are "1200"; "3.5" stays "3.5"."""
    flat = unicodedata.normalize("NFKC", text)
    return {_THOUSANDS.sub("", n) for n in _NUMBER.findall(flat)}


def _bigrams(run: str) -> list[str]:
    return [run[i:i + 2] for i in range(len(run) - 1)]


# Two content tokenizers, kept apart on purpose (merging them moves narrowing, verdicts and cache
# keys): `ranking_terms` is a bag of 6-letter stems and per-run CJK bigrams that BM25 weighs by
# count and that picks the evidence passages shown to the judge (so its output is part of the
# prompt); `overlap_words` is a set of numbers, 5-letter stems and whole-text CJK bigrams
# compared by overlap (statements true to their sentence, context relevance, similarity); a
# number is its own term.
_TERM_STOP = STOPWORDS | {"q"}
_TERM_WORD = re.compile(r"[a-z0-9]+")


def ranking_terms(text: str) -> list[str]:
    """Content terms with their repeats, for ranking (claims/evidence.py's BM25): Latin words
    and numbers cut to 6-letter stems (function words left out), the character bigrams of each
    run of Chinese characters (a run of one: the character)."""
    flat = normalize(text)
    out = [w[:6] for w in _TERM_WORD.findall(flat) if w not in _TERM_STOP]
    for run in CJK_RUN.findall(flat):
        out += _bigrams(run) or [run]
    return out


_CONTENT_STOP = STOPWORDS | {"one", "two"}
_CONTENT_WORD = re.compile(r"[a-z][a-z'’-]*")


def overlap_words(text: str) -> set[str]:
    """Content as a set, for overlap: `numbers`, 5-letter stems of the Latin words of three
    letters or more (function words left out), and the bigrams of the text's Chinese characters
    read as one run."""
    flat = normalize(text)
    out = numbers(flat)
    out |= {w[:5] for w in _CONTENT_WORD.findall(flat) if w not in _CONTENT_STOP and len(w) > 2}
    out |= set(_bigrams("".join(CJK.findall(flat))))
    return out


def json_safe(text: str) -> str:
    """ASCII double quotes turned into single ones: text shown to the judge to be copied into
    a JSON string, where a small model ends the string at the first `"` it copies."""
    return text.replace('"', "'")


def split_sentences(text: str) -> list[str]:
    """Split text into sentences: line breaks and bullets first, then end punctuation.

    Deterministic; keeps the punctuation with its sentence; drops empty pieces.
    """
    out: list[str] = []
    for raw_line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        line = _BULLET.sub("", raw_line).strip()
        if line:
            out.extend(_split_line(line))
    return out


KEPT = 64
"""Texts whose `Sentences` are kept (a sample's answer, ground truth and contexts, several
samples), so that the steps and the metrics of one sample share them."""


@dataclass(frozen=True, eq=False)
class Sentences:
    """A text's sentences (`split_sentences`, deterministic) and their match keys; equal only to
    itself (a sample's text is split once). The claims of an answer, the quotes looked up in the
    contexts, the passages of a long context, the closest sentence shown to the reader and the
    pieces of a material too long for the window all read it."""

    text: str
    items: tuple[str, ...]
    keys: tuple[str, ...] = field(repr=False)

    @property
    def or_whole(self) -> tuple[str, ...]:
        """The sentences, or the text itself when it has none (a blank or a bare fragment)."""
        return self.items or (self.text,)

    @functools.cached_property
    def ranking_terms(self) -> tuple[list[str], ...]:
        """The content terms (`ranking_terms`, a bag) of each of `or_whole`."""
        return tuple(ranking_terms(s) for s in self.or_whole)


@functools.lru_cache(maxsize=KEPT)
def sentences_of(text: str) -> Sentences:
    """The text cut into sentences, with their match keys (the last `KEPT` texts are kept)."""
    items = tuple(split_sentences(text))
    return Sentences(text, items, tuple(map(match_key, items)))


def sentences_of_all(texts: Iterable[str]) -> tuple[Sentences, ...]:
    """A material (a list of texts), each text cut into sentences (`sentences_of`)."""
    return tuple(sentences_of(t) for t in texts)


def _split_line(line: str) -> list[str]:
    pieces: list[str] = []
    start = 0
    for m in _ZH_END.finditer(line):
        end = m.end()
        mark = m.group(1)
        after = line[end] if end < len(line) else ""
        if mark in "!?;" and after and not after.isspace() and not CJK.match(after):
            continue  # '!?;' inside Latin text without a following space
        before = line[m.start() - 1] if m.start() else ""
        if mark == ";" and not (CJK.match(after) or CJK.match(before)):
            continue  # an ASCII ';' ends a sentence only next to Chinese text
        pieces.append(line[start:end])
        start = end
    pieces.append(line[start:])
    result: list[str] = []
    for piece in pieces:
        result.extend(_split_english(piece))
    return [p.strip() for p in result if p.strip()]


def _split_english(text: str) -> list[str]:
    text = _GLUED.sub(r"\1 ", text)
    pieces: list[str] = []
    start = 0
    for m in _EN_END.finditer(text):
        nxt = _first_after(text, m.end())
        if nxt.islower():
            continue  # a sentence does not start in lower case: "3 p.m. on Monday", "e.g. this"
        if m.group(1) == ".":
            word = _last_word(text, start, m.start()).lower().rstrip(".")
            if word in _ABBREV or (len(word) == 1 and word.isalpha()):
                continue  # abbreviation or initial ("Dr. Smith", "J. R. R. Tolkien")
        pieces.append(text[start:m.end()])
        start = m.end()
    pieces.append(text[start:])
    return pieces


def _first_after(text: str, pos: int) -> str:
    """The first non-space character from pos on ("" if none), without copying the rest of
    the text (a copy per sentence end made splitting a 1 MB line quadratic)."""
    while pos < len(text) and text[pos].isspace():
        pos += 1
    return text[pos : pos + 1]


def _last_word(text: str, start: int, end: int) -> str:
    """The last whitespace-separated word of text[start:end] ("" if none)."""
    while end > start and text[end - 1].isspace():
        end -= 1
    begin = end
    while begin > start and not text[begin - 1].isspace():
        begin -= 1
    return text[begin:end]
