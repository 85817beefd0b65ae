"""What kind of answer a question asks for (a duration, a number, a time, a unit or quantity)
and whether a reference answer holds it, by rule: the generator's cheap check that an answer
answers its question before the judge is asked (filters' `unanswered`). The kinds and units of
each language are in its module (lang/en.py, lang/zh.py)."""

from __future__ import annotations

import re

from localeval.generate.lang import en, written_in

measured_count = en.measured_count


def answer_lacks(question: str, answer: str) -> str | None:
    """What the kind of question asks for and its answer does not hold, by rule: a duration
    for "how long does it take" (not "11 kilometres"), a number for "how many", a time for
    "when"; Chinese: a number for 多少/几, with its unit when the question names one ("多少次"
    answered "两到三天"), a time for 什么时候/哪一年. The number or time must stand in what the
    answer adds to its question (`added`): "When are club nights held on Tuesday at 7 pm?"
    answered "Every Tuesday from 7 pm" gives no time. None: nothing missing, or a question of
    another kind. "Which"/"who" (哪家, 哪个, 谁 …) asks for a name: the answer must add a word
    beyond function words ("一家" names no magazine)."""
    return written_in(question).answer_lacks(question, added(question, answer), answer)


def added(question: str, answer: str) -> str:
    """What the answer says that its question does not: spaced text (English), its words less
    the question's (case-insensitive); else (Chinese), its characters less those of a character
    pair the question holds too."""
    if written_in(question + answer).spaced:
        asked = set(re.findall(r"[a-z0-9]+", question.lower()))
        return " ".join(w for w in re.findall(r"[A-Za-z0-9]+|[^\sA-Za-z0-9]", answer)
                        if w.lower() not in asked)
    pairs = {question[i:i + 2] for i in range(len(question) - 1)}
    return "".join(" " if answer[max(0, i - 1):i + 1] in pairs or answer[i:i + 2] in pairs
                   else ch for i, ch in enumerate(answer))
