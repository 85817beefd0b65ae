"""The checks that can overrule a verdict of support: a detail the material never mentions.

The judge's P(supported) against τ gives a verdict (claims/verdicts.py); `decide` then keeps a
verdict of support only when every number of the item and (in Latin script) every capitalised
name is in the material or the question (`novel_details`): a detail the material never mentions
cannot be supported by it. A number the material spells out ("nine-year-old", "五年") counts as
mentioned. `reason` says in words what decided; the material's sentence closest to the item is
shown to the reader (`closest_sentence`, claims/checks.py), at no cost in tokens.

The material's sentence closest to an item: the one sharing the most character trigrams of
the `text.match_key` form (the first such sentence; None when no sentence shares one).

Comparing the item's trigram set with every sentence's took 1.5-2 s per item against a 1 MB
context, on the event loop. `SentenceIndex` encodes every trigram of the material once as an
integer (three code points of 21 bits), sorted with its sentence number; an item then looks up
its own trigrams (binary search) and counts, per sentence, the distinct trigrams it shares.
Same results as the set comparison (tests/test_closest_sentence.py keeps it as reference).
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

from localeval.metrics.claims.record import Verdict
from localeval.text import Sentences, match_key, numbers, sentences_of_all

if TYPE_CHECKING:
    import numpy as np

_BITS = 21  # every code point (up to U+10FFFF) fits in 21 bits


def _codes(key: str) -> np.ndarray:
    """The code points of a match key (lone surrogates included)."""
    import numpy as np  # here, not at import: a run that needs no closest sentence loads none

    return np.frombuffer(key.encode("utf-32-le", "surrogatepass"), dtype=np.uint32).astype(
        np.int64
    )


def _short_code(key: str) -> int:
    """A key of under 3 characters is its own single "trigram" (see `grams`): coded as
    a negative number, so it equals only the same short key."""
    c = [*_codes(key).tolist(), 0, 0]
    return -1 - (len(key) | c[0] << 2 | c[1] << (2 + _BITS))


def _trigram_codes(codes: np.ndarray) -> np.ndarray:
    return codes[:-2] << (2 * _BITS) | codes[1:-1] << _BITS | codes[2:]


def grams(text: str) -> set[str]:
    """Character trigrams of the text's match_key form (for closeness in any script)."""
    key = match_key(text)
    return {key[i:i + 3] for i in range(max(1, len(key) - 2))}


def item_codes(item: str) -> np.ndarray:
    """The distinct trigram codes of a text (`grams` as integers)."""
    import numpy as np

    key = match_key(item)
    if len(key) < 3:
        return np.array([_short_code(key)], dtype=np.int64)
    return np.unique(_trigram_codes(_codes(key)))


class SentenceIndex:
    """Every (trigram, sentence) pair of a material once, sorted by trigram code."""

    def __init__(self, material: Sequence[Sentences]) -> None:
        import numpy as np

        self.sentences: list[str] = []
        keys: list[str] = []
        for text in material:
            self.sentences += text.or_whole
            keys += text.keys if text.items else (match_key(text.text),)
        lengths = np.array([len(k) for k in keys], dtype=np.int64)
        ends = np.cumsum(lengths)
        codes = _codes("".join(keys))
        sentence = np.repeat(np.arange(len(keys), dtype=np.int64), lengths)
        if len(codes) >= 3:  # a trigram starting at p lies within its sentence
            tri, owner = _trigram_codes(codes), sentence[:-2]
            keep = np.arange(len(tri)) + 2 < ends[owner]
            tri, owner = tri[keep], owner[keep]
        else:
            tri = owner = np.zeros(0, dtype=np.int64)
        short = [(i, _short_code(k)) for i, k in enumerate(keys) if len(k) < 3]
        if short:
            tri = np.concatenate([tri, np.array([c for _, c in short], dtype=np.int64)])
            owner = np.concatenate([owner, np.array([i for i, _ in short], dtype=np.int64)])
        order = np.lexsort((owner, tri))
        tri, owner = tri[order], owner[order]
        first = np.ones(len(tri), dtype=bool)  # one pair per (trigram, sentence)
        first[1:] = (tri[1:] != tri[:-1]) | (owner[1:] != owner[:-1])
        self.codes, self.owners = tri[first], owner[first].astype(np.int32)

    def closest(self, item: str) -> str | None:
        import numpy as np

        wanted = item_codes(item)
        lo = np.searchsorted(self.codes, wanted, side="left")
        hi = np.searchsorted(self.codes, wanted, side="right")
        hit = hi > lo
        if not hit.any():
            return None
        owners = np.concatenate([self.owners[a:b] for a, b in zip(lo[hit], hi[hit], strict=True)])
        shared = np.bincount(owners, minlength=len(self.sentences))
        return self.sentences[int(shared.argmax())]  # the first of the best, as before


def closest_sentence(item: str, material: Sequence[Sentences]) -> str | None:
    """The material's sentence sharing the most character trigrams with the item. The index of
    the last few materials is kept, so a sample's items share one."""
    return _index(tuple(material)).closest(item)


@functools.lru_cache(maxsize=8)
def _index(material: tuple[Sentences, ...]) -> SentenceIndex:
    return SentenceIndex(material)


_NAME = re.compile(r"\b[A-Z][A-Za-z0-9'’-]*[A-Za-z0-9]|\b[A-Z]\b")
_WORD = re.compile(r"[A-Za-z0-9]+")
STOP_NAMES = {
    "the", "a", "an", "i", "it", "he", "she", "they", "we", "this", "that", "these", "those",
    "in", "on", "at", "of", "and", "or", "but", "for", "to", "by", "with", "as", "from", "his",
    "her", "its", "their", "there", "yes", "no", "not", "both", "also", "however", "after",
    "before", "during", "when", "while", "if", "so", "then", "which", "who", "what", "where",
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday", "you", "all", "our", "your", "my", "is", "are", "was", "were", "be",
    # a question's first word, now that questions that may carry a claim are judged
    "why", "how", "whom", "whose", "do", "does", "did", "has", "have", "had", "can", "could",
    "will", "would", "should", "shall", "must", "might", "am",
}


_UNITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen"]
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_EN_VALUE = {w: i for i, w in enumerate(_UNITS)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
_EN_SPELLED = re.compile(r"\b(" + "|".join(_TENS) + r")(?:[- ](" + "|".join(_UNITS[1:10]) +
                         r"))?\b|\b(" + "|".join(_UNITS) + r")\b", re.IGNORECASE)
_ZH_DIGIT = {"零": 0, "〇": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6,
             "七": 7, "八": 8, "九": 9}
_ZH_UNIT = {"十": 10, "百": 100, "千": 1000}
_ZH_SPELLED = re.compile("([零〇一二两三四五六七八九十百千]+)(?=年|个|人|名|次|岁|月|日|天|位|家|"
                         "条|件|项|米|公里|万|亿|元|倍|周|小时|分钟|秒|座|所|部|本|场|届|支|架|"
                         "辆|只|层|期|节|种|号|成|比)")
"""A number in Chinese characters before a unit or measure word ("五年", "三百名"), so that the
一 of 一些 or the 十 of 十分 is no number."""


def _zh_value(run: str) -> int | None:
    """一 … 九千九百九十九 as a number ("十五" 15, "二十" 20, "三百零五" 305); None if malformed."""
    total, digit = 0, None
    for ch in run:
        if ch in _ZH_DIGIT:
            if digit is not None and ch not in "零〇":
                return None  # "一二" is a list of digits, not one number
            digit = _ZH_DIGIT[ch] if ch not in "零〇" else None
        else:
            total += (1 if digit is None else digit) * _ZH_UNIT[ch]
            digit = None
    return total + (digit or 0)


def spelled_numbers(text: str) -> set[str]:
    """Numbers the text writes in words, as digits: "nine-year-old" → 9, "twenty-three" → 23,
    "五年" → 5, "十五" → 15. A material that says "nine" holds the claim's "9"."""
    out = set()
    for m in _EN_SPELLED.finditer(text):
        tens, unit, alone = m.groups()
        value = _EN_VALUE[alone.casefold()] if alone else \
            _EN_VALUE[tens.casefold()] + (_EN_VALUE[unit.casefold()] if unit else 0)
        out.add(str(value))
    for m in _ZH_SPELLED.finditer(text):
        value = _zh_value(m.group(1))
        if value is not None:
            out.add(str(value))
    return out


def _names(text: str) -> list[str]:
    """Capitalised words of Latin text, except function words (a capitalised common noun at
    the start of a statement is normally in the material too, in any case)."""
    return list(dict.fromkeys(w for w in _NAME.findall(text)
                              if w.casefold().strip("'’-") not in STOP_NAMES))


def _name_known(name: str, words: set[str]) -> bool:
    """A name is known if each of its capitalised or numeric parts ("Ju-hyun" → "Ju", "Rae's"
    → "Rae") shares its stem with a word of the material (all but up to 3 final letters, at
    least 4): "American" matches "America", "Toronto" matches "Toronto's"."""
    parts = [p for p in _WORD.findall(name) if len(p) > 1 and (p[0].isupper() or p[0].isdigit())]
    for part in parts:
        key = part.casefold()
        if key in STOP_NAMES:
            continue
        stem = key[:max(4, len(key) - 3)]
        if not any(w.startswith(stem) for w in words):
            return False
    return True


def novel_details(item: str, known: list[str]) -> list[str]:
    """The item's numbers and capitalised names that none of the `known` texts mention."""
    known_numbers, known_words = _known(tuple(known))
    missing = sorted(numbers(item) - known_numbers, key=item.find)
    missing += [n for n in _names(item) if not _name_known(n, known_words)]
    return missing


@functools.lru_cache(maxsize=8)
def _known(texts: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """The numbers and casefolded words of the texts, kept for the last few materials: every
    item of a sample is checked against the same material (a 1 MB one took 58 ms per item)."""
    found: set[str] = set()
    words: set[str] = set()
    for text in texts:
        found |= numbers(text) | spelled_numbers(text)
        words |= {w.casefold() for w in _WORD.findall(unicodedata.normalize("NFKC", text))}
    return frozenset(found), frozenset(words)


def decide(item: str, said: int, material: list[str], question: str | None,
           *, material_name: str = "context", details: bool = True,
           known: list[str] | None = None,
           cut: Sequence[Sentences] | None = None) -> Verdict:
    """The final verdict of one item: the judge's verdict (`said`, already decided by τ)
    overruled when (with `details`) one of the item's numbers or names is in neither the
    material nor the question (`known`: the whole material, when `material` is the passages
    the item was judged against; `cut`: `material` already split)."""
    closest = closest_sentence(item, cut if cut is not None else sentences_of_all(material))
    novel = novel_details(item, [*(known or material), question or ""]) if details else []
    problems = []
    if said != 1:
        problems.append(f"the judge found no support in the {material_name}")
    if novel:
        problems.append(f"not in the {material_name}: {', '.join(novel)}")
    reason = "; ".join(problems) if problems else f"the judge found it in the {material_name}"
    return Verdict(0 if problems else 1, reason, judge_verdict=said,
                   closest_sentence=closest or None,  # for the reader: no tokens spent on it
                   novel_details=tuple(novel))
