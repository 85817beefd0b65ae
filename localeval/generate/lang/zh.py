"""Chinese: every word list, pattern, unit and rule of `generate` that is Chinese's own, and
`LANGUAGE`, the record the stages read. Chinese has no word breaks: texts are compared by
character pairs."""

from __future__ import annotations

import re

from localeval.generate.lang.record import Language
from localeval.text import CJK_RANGES, CJK_RUN

FUNCTION = "的了是在和与及或等也都就而被把从对为于以之其这那个些吗呢吧啊"
"""Function characters: no content word holds them, and none opens a quantity's name ("的海拔"
names 海拔)."""
NUMERALS = frozenset("零〇一二三四五六七八九十百千万亿两年月日")
"""Characters of a number or date: a term holding one names no subject."""
ENTITY_NUMERALS = frozenset("零〇一二三四五六七八九十百千万亿两年月日个")
"""Characters of a number or count: a run holding one is no entity (picking)."""
RUN3 = re.compile(f"[{CJK_RANGES}]{{3,}}")
NAME_CHARS = 3
"""The shortest name a document without a title is found by: the longest opening of its first
sentence (this many characters or more) that the document writes again."""
NAME_MAX = 12
"""The most characters of a name (a document's, or a subject a question is rewritten to hold:
one run, no function character)."""
NO_NAME_OPENINGS = ("越来越", "随着", "近年", "近日", "目前", "如今", "当前", "今年", "去年", "据",
                    "一些", "许多", "很多", "不少", "大多", "所有", "每")
"""Openings of a sentence that are a time, a source or a quantity, never a name: "越来越多" is
written again in most news items ("越来越多的人选择……") and names no document."""
BEFORE_NAME = set("的在是了和与对把被从向到由于为")
"""Characters after which a short form opens a phrase (and may be written in full)."""

# ---- questions: three patterns of question words, each by its use ------------------------------
COUNTED_ASKING = re.compile(r"为什么|为何|何[时地处人种]|什么|哪|多少|几[个年次种位家条天岁点月号]|"
                            r"谁|怎么|怎样|如何|是否|多[长大高远久重宽深快贵厚粗]")
"""The question words counted when a question asks two things (two_things): 几 only with its
measure word, no particle."""
ASKS = re.compile(COUNTED_ASKING.pattern + r"|[吗呢么嘛]\s*[?？]?\s*$|几|咋|啥|有没有|是不是|"
                  r"能不能|可不可以|会不会|要不要")
"""What makes a text a question (asks): any question word, or a closing particle."""
ASKED_WITH = re.compile(r"为什么|为何|何[时地处人种]|什么|啥|哪|多少|几|谁|怎么|怎样|如何|是否|"
                        r"多[长大高远久重宽深快贵厚粗]|吗|呢")
"""The question words two forms of one question are compared by (question_words)."""
SAME_ASKING = {"啥": "什么", "为何": "为什么", "怎样": "怎么", "如何": "怎么", "呢": "吗",
               "何时": "什么", "何种": "什么", "何地": "哪", "何处": "哪", "何人": "谁"}
"""Question words that ask the same: 啥 as 什么, 如何 as 怎么, 呢 as 吗, 何时 as 什么(时候)."""
LIST = re.compile(r"分别|各是|各有|[、].*[、]")
CLAUSE = re.compile(r"[，；]")
CLAUSES = 3
"""An answer of this many clauses (split at ，；) or more tells more than one fact."""
POINTERS = re.compile(r"文中|本文|文章中|上文|该文|这段|本段|此段|段落中|文本中|原文|上述|"
                      r"材料中|资料中|根据以上|以上内容|这篇|该段|文字中|这两段|两段文字|"
                      r"提到|提及|描述了")
VAGUE = re.compile(r"介绍|(?:怎么样|是怎样的|是什么样的?)[？?]?$", re.IGNORECASE)
DECLINES = re.compile(
    r"^\W*(?:无|没有|不知道|未知)\W*$|"
    r"未(?:提及|提到|说明|给出)|没有(?:提到|提及|说明|给出|信息)|无法(?:回答|确定|得知)",
    re.IGNORECASE)
PLACING = frozenset({"的", "在"})
EXAMPLE_NAMES = ("埃菲尔铁塔 巴黎 世界博览会", "英雄 张艺谋 陕西西安 李连杰 梁朝伟")
SPOKEN = (("什么", "啥"), ("哪里", "哪儿"), ("哪一年", "哪年"), ("为什么", "为啥"), ("的", ""))
"""How a question is typed in speech: 啥 for 什么, 哪儿 for 哪里, 哪年 for 哪一年, 为啥 for 为什么,
no 的."""
SPOKEN_END = "啊"
"""The particle a spoken question ends with when no word of SPOKEN changed it
("江州博物馆每天限额多少人啊"), unless it ends in 吗, 呢 or a particle already."""
PARTICLES = ("吗", "呢", "啊", "呀", "吧", "嘛")

# ---- kinds of answer (answer_kind) --------------------------------------------------------------
DIGITS = "0-9零〇一二三四五六七八九十百千万亿两半几数多"
UNITS = ("人次", "平方米", "公里", "公顷", "小时", "分钟", "公斤", "千克", "次", "年",
         "天", "岁", "米", "元", "家", "人", "个", "种", "座", "条", "位", "名", "辆", "列",
         "层", "吨", "亩", "届", "场", "项", "件", "本", "所", "只", "头", "棵",
         "班", "部", "张", "间")
"""Units a question names after 多少/几 that its answer must hold (longest first)."""
MONEY = re.compile(r"元|块|钱|免费")
TIME = re.compile(rf"\d{{4}}|[{DIGITS}]\s*[点时号分秒]|年|月|日|世纪|朝|代|时期|初|末|前|后|"
                  r"期间|季|周|星期|早|晚|上午|下午|凌晨|夜")
"""A time in what an answer adds: a time word, a year, or a number of a clock or date unit; a
bare numeral is none ("一个金色尖顶……" for "……何时安装就位？")."""


def two_things(question: str) -> bool:
    """Two question words, or a list (分别, or two 、), or it asks and then states: its question
    word stands in a clause before its last ("云岭茶园做青需要多久，老师傅根据香气判断火候？"; a
    condition before the question is one thing: "……旺季时，周末常常需要排队多久？")."""
    asking = [m.group(0) for m in COUNTED_ASKING.finditer(question)]
    *before, last = CLAUSE.split(question.strip().rstrip("？?。 "))
    return len(asking) >= 2 or bool(LIST.search(question)) or (
        bool(before) and not ASKS.search(last) and any(ASKS.search(c) for c in before))


def answer_lacks(question: str, new: str, answer: str) -> str | None:
    """A number for 多少/几, with its unit when the question names one ("多少次" answered
    "两到三天"), a price for 多少钱, a time for 什么时候/哪一年, a duration for 多久, a word
    beyond function words for 哪家/谁."""
    if re.search(r"哪[家个位所种本部座间条]|谁", question) and not re.sub(
            rf"[一{FUNCTION}]|[^{CJK_RANGES}A-Za-z0-9]", "", new):
        return "a name"  # "被哪家旅行杂志评为……？" answered "被一家旅行杂志评为……"
    if m := re.search(r"(?:多少|几)(钱)?", question):
        if m.group(1):
            return None if MONEY.search(answer) else "a price"
        if not re.search(rf"[{DIGITS}]|免费|没有", new):
            return "a number"
        rest = question[m.end():]
        unit = next((u for u in UNITS if rest.startswith(u)), None)
        if unit is not None:
            return None if unit[0] in answer else f"the unit {unit}"
        if (what := re.search(rf"([{CJK_RANGES}]{{2,3}})(?:是|为|有)?(?:多少|几)[？?]?$",
                              question)) and not any(what.group(1)[i:i + 2] in answer
                                                     for i in range(len(what.group(1)) - 1)):
            # "云岭茶园的海拔是多少？" answered with its area
            return "the " + what.group(1).lstrip(FUNCTION)
        return None
    if re.search(r"多久|多长时间", question):
        return None if re.search(r"年|月|天|日|小时|分钟|秒|周|星期|世纪|代", new) \
            else "a duration"
    if re.search(r"什么时候|何时|哪一?年|哪天|几月", question):
        return None if TIME.search(new) else "a time"
    return None


def spoken(text: str) -> str:
    """The spoken words of SPOKEN, or else the particle SPOKEN_END."""
    plain = text
    for written, said in SPOKEN:
        text = text.replace(written, said)
    if text == plain and not text.endswith(PARTICLES):
        text += SPOKEN_END
    return text


def named(question: str, name: str) -> str:
    """The longest end of the name the question holds at its start or after a function
    character, written in full."""
    if name in question:
        return question
    for k in range(len(name) - 1, 1, -1):
        short = name[-k:]
        at = question.find(short)
        if at >= 0 and (at == 0 or question[at - 1] in BEFORE_NAME
                        or not CJK_RUN.match(question[at - 1])):
            return question[:at] + name + question[at + k:]
    return question


def is_name(text: str) -> bool:
    """One run of NAME_MAX characters at most, no function character ("江州博物馆", not
    "围棋的规则与历史")."""
    return bool(CJK_RUN.fullmatch(text)) and len(text) <= NAME_MAX and \
        not any(ch in FUNCTION for ch in text)


def without_terms(text: str, terms: frozenset[str]) -> str:
    """Each term (a character pair, or a whole name or title) blanked wherever it stands,
    longest first."""
    for term in sorted(terms, key=lambda t: (-len(t), t)):
        text = text.replace(term, " ")
    return text


def entities(text: str) -> set[str]:
    """Runs of three characters holding no numeral."""
    found: set[str] = set()
    for run in RUN3.findall(text):
        found.update(g for g in (run[i:i + 3] for i in range(len(run) - 2))
                     if not any(ch in ENTITY_NUMERALS for ch in g))
    return found


LANGUAGE = Language(
    code="zh", spaced=False, capitals=False,
    no_answer="文档中没有能回答这个问题的内容。", full_stop="。",
    pointers=POINTERS, vague=VAGUE, declines=DECLINES, stated_asks=ASKS, point_asks=ASKS,
    tail=CLAUSE, asks=lambda text: bool(ASKS.search(text)), two_things=two_things,
    question_words=lambda text: {SAME_ASKING.get(w, w) for w in ASKED_WITH.findall(text)},
    names_in_question=lambda q: [], outside_names=lambda words: words,
    length=lambda text: len(text.strip()), focus_length=8, query_length=5,
    answer_size=lambda answer: len("".join(answer.split())) / 2,
    tells_many=lambda answer: len(CLAUSE.findall(answer)) >= CLAUSES - 1,
    answer_lacks=answer_lacks, casual=lambda text, key: text, spoken=spoken,
    join_questions=lambda head, second: f"{head}，以及{second}",
    join_answers=lambda first, second: (
        first if first.endswith(("。", "！", "？")) else first + "。") + second,
    named=named, as_name=lambda subject: subject if is_name(subject) else "",
    key=lambda word: word, without_terms=without_terms, entities=entities, links=lambda term: False,
    never_subject=frozenset(), numerals=NUMERALS, placing=PLACING,
    example_names=EXAMPLE_NAMES)
