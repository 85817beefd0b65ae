"""What kind of answer a question asks for (a duration, a number, a time, a Chinese unit or
quantity) and whether a reference answer holds it, by rule: the generator's cheap check that an
answer answers its question before the judge is asked (filters' `unanswered`)."""

from __future__ import annotations

import re

from localeval.text import CJK_RANGES, STOPWORDS, has_cjk

ZH_FUNCTION = "的了是在和与及或等也都就而被把从对为于以之其这那个些吗呢吧啊"
"""Chinese function characters: no content word holds them, and none opens a quantity's name
("的海拔" names 海拔)."""
_DURATION = (r"second|minute|hour|day|night|week|fortnight|month|year|decade|century|"
             r"centuries")
_LENGTH = (r"metres?|meters?|m|km|kilometres?|kilometers?|miles?|feet|foot|ft|yards?|cm|mm|"
           r"inch(?:es)?")
_CARDINALS = (r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|"
              r"thirty|forty|fifty|sixty|hundred|thousand|million|billion|dozen|a few|several")
"""Numbers written as words."""
_EN_NUMBER = rf"\d|\b(?:{_CARDINALS}|half|free|none|no)\b"
_EN_WHEN_NUMBER = (r"\b(?:1\d{3}|20\d{2})s?\b|\d(?:st|nd|rd|th)\b|\d\s*(?:am|pm|a\.m\.|p\.m\.|"
                   rf"o'clock)|\d:\d\d|(?:\d|\b(?:{_CARDINALS}))\s+(?:{_DURATION})s?\b")
"""A number that tells a time: a year, an ordinal, a clock time, a count of a time unit (not
"212 players")."""
_EN_TIME = (_EN_WHEN_NUMBER + r"|\b(?:january|february|march|april|may|june|july|august|september|"
            r"october|november|december|spring|summer|autumn|winter|morning|afternoon|evening|"
            r"night|century|ago|after|before|during|since|until|when|daily|weekly|"
            r"monday|tuesday|wednesday|thursday|friday|saturday|sunday|first|last|once)\b")
_EN_MEASURE = (rf"(?:{_DURATION}|{_LENGTH}|pounds?|pence|dollars?|euros?|yuan|percent|degrees?|"
               r"kg|kilograms?|grams?|tonnes?|litres?|liters?)s?")
"""A unit a number measures by: "60 pounds" or "seven hours" counts no people."""
_EN_COUNT = re.compile(r"\bhow many ([a-z]+)")
_EN_COUNTED = re.compile(rf"(?:\d[\d,.]*|\b(?:{_CARDINALS})\b)(?:\s+({_EN_MEASURE})\b|"
                         rf"\s+[a-z-]+\s+({_EN_MEASURE})\b)?")
_EN_KINDS = (  # (the question's words, what its answer must hold, its name)
    (r"\bhow long\b.*\b(?:take|takes|took|last|lasts|lasted|wait|stay|spend|run for)\b",
     rf"\b(?:{_DURATION})s?\b", "a duration"),
    (r"\bhow (?:long|far|tall|high|deep|wide)\b", rf"\d|\b(?:{_DURATION}|{_LENGTH})s?\b",
     "a measure"),
    (r"\bhow (?:many|much|old)\b", _EN_NUMBER, "a number"),
    (r"\bhow often\b", r"\b(?:every|each|once|twice|times?|daily|weekly|monthly|yearly|annually|"
     r"hourly|per|a (?:day|week|month|year))\b", "a frequency"),
    (r"^(?:when|what year|which year|in (?:what|which) year)\b|\bwhen (?:was|were|did|does|is)\b",
     _EN_TIME, "a time"),
)
_ZH_DIGITS = "0-9零〇一二三四五六七八九十百千万亿两半几数多"
_ZH_UNITS = ("人次", "平方米", "公里", "公顷", "小时", "分钟", "公斤", "千克", "次", "年",
             "天", "岁", "米", "元", "家", "人", "个", "种", "座", "条", "位", "名", "辆", "列",
             "层", "吨", "亩", "届", "场", "项", "件", "本", "所", "只", "头", "棵",
             "班", "部", "张", "间")
"""Units a Chinese question names after 多少/几 that its answer must hold (longest first)."""
_ZH_MONEY = re.compile(r"元|块|钱|免费")
_ZH_TIME = re.compile(rf"[{_ZH_DIGITS}]|年|月|日|世纪|朝|代|时期|初|末|前|后|期间|季|周|星期|"
                      r"早|晚|上午|下午|凌晨|夜")


def answer_lacks(question: str, answer: str) -> str | None:
    """What the kind of question asks for and its answer does not hold, by rule: a duration
    for "how long does it take" (not "11 kilometres"), a number for "how many", a time for
    "when"; Chinese: a number for 多少/几, with its unit when the question names one ("多少次"
    answered "两到三天"), a time for 什么时候/哪一年. The number or time must stand in what the
    answer adds to its question (`added`): "When are club nights held on Tuesday at 7 pm?"
    answered "Every Tuesday from 7 pm" gives no time. None: nothing missing, or a question of
    another kind. "Which"/"who" (哪家, 哪个, 谁 …) asks for a name: the answer must add a word
    beyond function words ("一家" names no magazine)."""
    new = added(question, answer)
    if not has_cjk(question):
        q, a = question.lower(), new.lower()
        if (what := measured_count(q, a)) is not None:
            return what
        for asked, needed, name in _EN_KINDS:
            if re.search(asked, q):
                return None if re.search(needed, a) else name
        if re.match(r"(?:which|who|whom|whose)\b", q) and not set(
                re.findall(r"[a-z0-9]+", a)) - STOPWORDS:
            return "a name"  # "Which magazine …?" answered "A travel magazine …"
        return None
    if re.search(r"哪[家个位所种本部座间条]|谁", question) and not re.sub(
            rf"[一{ZH_FUNCTION}]|[^{CJK_RANGES}A-Za-z0-9]", "", new):
        return "a name"  # "被哪家旅行杂志评为……？" answered "被一家旅行杂志评为……"
    if m := re.search(r"(?:多少|几)(钱)?", question):
        if m.group(1):
            return None if _ZH_MONEY.search(answer) else "a price"
        if not re.search(rf"[{_ZH_DIGITS}]|免费|没有", new):
            return "a number"
        rest = question[m.end():]
        unit = next((u for u in _ZH_UNITS if rest.startswith(u)), None)
        if unit is not None:
            return None if unit[0] in answer else f"the unit {unit}"
        if (what := re.search(rf"([{CJK_RANGES}]{{2,3}})(?:是|为|有)?(?:多少|几)[？?]?$",
                              question)) and not any(what.group(1)[i:i + 2] in answer
                                                     for i in range(len(what.group(1)) - 1)):
            # "云岭茶园的海拔是多少？" answered with its area
            return "the " + what.group(1).lstrip(ZH_FUNCTION)
        return None
    if re.search(r"多久|多长时间", question):
        return None if re.search(r"年|月|天|日|小时|分钟|秒|周|星期|世纪|代", new) \
            else "a duration"
    if re.search(r"什么时候|何时|哪一?年|哪天|几月", question):
        return None if _ZH_TIME.search(new) else "a time"
    return None


def measured_count(question: str, added_words: str) -> str | None:
    """For "how many <things>" (not a unit: "how many years", nor "times"), "a count of
    <things>" when the first number the answer adds measures by a unit ("Membership costs 60
    pounds a year" for "How many people join …?", "within seven hours" for "How many runners
    …?"); None otherwise."""
    m = _EN_COUNT.search(question)
    if m is None or m.group(1) == "times" or re.fullmatch(_EN_MEASURE, m.group(1)):
        return None
    first = _EN_COUNTED.search(added_words)
    return f"a count of {m.group(1)}" if first and (first.group(1) or first.group(2)) else None


def added(question: str, answer: str) -> str:
    """What the answer says that its question does not: English, its words less the
    question's (case-insensitive); Chinese, its characters less those of a character pair
    the question holds too."""
    if not has_cjk(question) and not has_cjk(answer):
        asked = set(re.findall(r"[a-z0-9]+", question.lower()))
        return " ".join(w for w in re.findall(r"[A-Za-z0-9]+|[^\sA-Za-z0-9]", answer)
                        if w.lower() not in asked)
    pairs = {question[i:i + 2] for i in range(len(question) - 1)}
    return "".join(" " if answer[max(0, i - 1):i + 1] in pairs or answer[i:i + 2] in pairs
                   else ch for i, ch in enumerate(answer))
