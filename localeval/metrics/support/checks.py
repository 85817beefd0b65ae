"""The checks that can overrule a verdict of support: a detail the material never mentions.

The judge's P(supported) against τ gives a verdict (support/verdicts.py); `decide` then keeps a
verdict of support only when every number of the item and (in Latin script) every capitalised
name is in the material or the question (`novel_details`): a detail the material never mentions
cannot be supported by it. A number the material spells out ("nine-year-old", "五年") counts as
mentioned. `reason` says in words what decided; the material's sentence closest to the item is
shown to the reader (`closest_sentence`, support/closest.py), at no cost in tokens.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Sequence
from typing import Any

from localeval.metrics.support.closest import closest_sentence
from localeval.text import Sentences, numbers, sentences_of_all

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


def decide(item: str, judged: dict[str, Any], material: list[str], question: str | None,
           *, material_name: str = "context", details: bool = True,
           known: list[str] | None = None,
           cut: Sequence[Sentences] | None = None) -> dict[str, Any]:
    """The final verdict of one item: the judge's verdict (`judged`, already decided by τ)
    overruled when (with `details`) one of the item's numbers or names is in neither the
    material nor the question (`known`: the whole material, when `material` is the passages
    the item was judged against; `cut`: `material` already split)."""
    out: dict[str, Any] = dict(judged)
    if "reason" in out:
        out["judge_reason"] = out.pop("reason")
    said = int(judged["verdict"])
    out["judge_verdict"] = said
    closest = closest_sentence(item, cut if cut is not None else sentences_of_all(material))
    if closest:
        out["closest_sentence"] = closest  # for the reader: no tokens spent on it
    novel = novel_details(item, [*(known or material), question or ""]) if details else []
    if novel:
        out["novel_details"] = novel
    problems = []
    if said != 1:
        problems.append(f"the judge found no support in the {material_name}")
    if novel:
        problems.append(f"not in the {material_name}: {', '.join(novel)}")
    out["verdict"] = 0 if problems else 1
    out["reason"] = "; ".join(problems) if problems else (
        f"the judge found it in the {material_name}")
    return out
