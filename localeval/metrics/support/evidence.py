"""Mechanical checks behind a support verdict: is the judge's evidence really in the material,
and does the material hold the item's specific details?

The judge copies the material's sentence that bears on an item (a statement, a sentence) before
its verdict. `locate` looks the copy up in the material after `text.match_key` (NFKC, case,
whitespace and punctuation removed): exact containment, else the share of the copy covered by
order-preserving common runs of at least MIN_RUN characters must reach FOUND_COVERAGE (0.8) and
every number of the copy must occur in the material, so a dropped comma or a copy cut short by
the schema's length limit still counts, while a statement "copied" as evidence (a parroted
reason) does not. `novel_details` lists the item's numbers (and,
in Latin script, capitalised names) that appear neither in the material nor in the question:
a detail the material never mentions cannot be supported by it. A number the material spells
out ("nine-year-old", "五年") counts as mentioned.

`decide` combines the judge's verdict with both checks; a verdict of support stands only when the
evidence is found and no detail of the item is missing from the sentences it was copied from
(nor the question). Its `reason` says in words what decided (the judge's own reason, when it
wrote one, is kept as `judge_reason`).
"""

from __future__ import annotations

import difflib
import functools
import re
import unicodedata
from typing import Any

from localeval.metrics.support.closest import closest_sentence
from localeval.text import match_key, split_sentences

FOUND_COVERAGE = 0.8
MIN_RUN = 4
WINDOW = 3
NONE_WORDS = {"none", "无", "没有", "无相关内容", "null", "n/a", ""}

_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
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
}


def is_none(quote: str) -> bool:
    return match_key(quote) in {match_key(w) for w in NONE_WORDS}


def coverage(quote: str, texts: list[str]) -> float:
    """Share of the quote's characters (match_key form) found, in order, in one of `texts`."""
    q = match_key(quote)
    if not q:
        return 0.0
    best = 0.0
    for text in texts:
        t = match_key(text)
        if q in t:
            return 1.0
        matcher = difflib.SequenceMatcher(None, q, t, autojunk=False)
        covered = sum(b.size for b in matcher.get_matching_blocks() if b.size >= MIN_RUN)
        best = max(best, covered / len(q))
    return best


def locate(quote: str, texts: list[str]) -> list[str] | None:
    """The material's sentences the quote was copied from (the fewest consecutive sentences,
    up to WINDOW, that contain it by the module doc's rule), or None when it is "none" or not
    found. Every number of the quote must be in them too (a fuzzy match must not let a changed
    number through)."""
    if is_none(quote) or coverage(quote, texts) < FOUND_COVERAGE:
        return None
    for size in range(1, WINDOW + 1):
        for text in texts:
            sentences = split_sentences(text) or [text]
            for i in range(max(1, len(sentences) - size + 1)):
                window = sentences[i:i + size]
                if coverage(quote, [" ".join(window)]) >= FOUND_COVERAGE and \
                        _numbers_copied(quote, " ".join(window)):
                    return window
    return None


def _numbers(text: str) -> set[str]:
    flat = unicodedata.normalize("NFKC", text)
    return {re.sub(r"(?<=\d),(?=\d{3})", "", n).rstrip(".,") for n in _NUMBER.findall(flat)}


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


def _numbers_copied(quote: str, source: str) -> bool:
    """Every number of the quote is a number of the source; the quote's last number may be the
    start of one (the copy was cut short by the schema's length limit)."""
    known = _numbers(source)
    flat = unicodedata.normalize("NFKC", quote).rstrip()
    for m in _NUMBER.finditer(flat):
        n = re.sub(r"(?<=\d),(?=\d{3})", "", m.group()).rstrip(".,")
        at_end = m.end() >= len(flat.rstrip(".,"))
        if n not in known and not (at_end and any(k.startswith(n) for k in known)):
            return False
    return True


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
    missing = sorted(_numbers(item) - known_numbers, key=item.find)
    missing += [n for n in _names(item) if not _name_known(n, known_words)]
    return missing


@functools.lru_cache(maxsize=8)
def _known(texts: tuple[str, ...]) -> tuple[frozenset[str], frozenset[str]]:
    """The numbers and casefolded words of the texts, kept for the last few materials: every
    item of a sample is checked against the same material (a 1 MB one took 58 ms per item)."""
    numbers: set[str] = set()
    words: set[str] = set()
    for text in texts:
        numbers |= _numbers(text) | spelled_numbers(text)
        words |= {w.casefold() for w in _WORD.findall(unicodedata.normalize("NFKC", text))}
    return frozenset(numbers), frozenset(words)


def grams(text: str) -> set[str]:
    """Character trigrams of the text's match_key form (for closeness in any script)."""
    key = match_key(text)
    return {key[i:i + 3] for i in range(max(1, len(key) - 2))}


def decide(item: str, judged: dict[str, Any], material: list[str], question: str | None,
           *, check_evidence: bool, material_name: str = "context",
           details: bool = True, known: list[str] | None = None) -> dict[str, Any]:
    """The final verdict of one item: the judge's answer (`judged`: verdict, plus evidence or
    reason) overruled when the evidence is not in the material or (with `details`) one of the
    item's numbers or names is not in the material nor the question (`known`: the whole
    material, when `material` is the passages the item was judged against)."""
    out: dict[str, Any] = dict(judged)
    if "reason" in out:
        out["judge_reason"] = out.pop("reason")
    said = int(judged["verdict"])
    out["judge_verdict"] = said
    if check_evidence:
        quote = str(judged.get("evidence", ""))
        window = locate(quote, material)
        found = window is not None
        out["evidence_found"] = found
        if window is not None and " ".join(window) != quote:
            out["evidence_sentences"] = window
        # the item's details must be in what the judge pointed to (or the question)
        known = [*(window or material), question or ""]
    else:
        quote, found = "", True
        known = [*(known or material), question or ""]
        closest = closest_sentence(item, material)
        if closest:
            out["closest_sentence"] = closest  # for the reader: no tokens spent on it
    novel = novel_details(item, known) if details else []
    if novel:
        out["novel_details"] = novel
    problems = []
    if said != 1:
        problems.append(f"the judge found no support in the {material_name}" if not check_evidence
                        else f"the {material_name} has nothing on it (evidence: none)"
                        if is_none(quote)
                        else f"the judge found that the {material_name} does not state it")
    if novel:
        where = "quoted evidence" if check_evidence and found else material_name
        problems.append(f"not in the {where}: {', '.join(novel)}")
    if said == 1 and not found:
        problems.append("the judge said supported but quoted no evidence" if is_none(quote)
                        else f"the judge said supported, but its quote is not in the "
                             f"{material_name}")
    out["verdict"] = 0 if problems else 1
    out["reason"] = "; ".join(problems) if problems else (
        f"supported by the quoted {material_name}" if check_evidence
        else f"the judge found it in the {material_name}")
    return out
