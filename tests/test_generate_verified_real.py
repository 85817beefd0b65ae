"""Issue 52 item 2 on the 1.5B judge: the yes/no steps that verify a generated row blind —
`generate_agree` (does a blind answer give the reference answer's answer?) and
`generate_answers` (does a kept row answer an "unanswerable" question?) — on clear cases in en
and zh; and item 3's bridge draft (`generate_clue`, `generate_bridge`) on a film and its
director in en and zh.

    flock /tmp/localeval-cpu.lock .venv/bin/python -m pytest \
        tests/test_generate_verified_real.py -m "model_small" -q
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from localeval.config import Settings
from localeval.data.dataset import Sample
from localeval.generate.drafting import agrees, answers_other, context
from localeval.judge.client import JudgeClient
from tests.conftest import OpenJudge

pytestmark = [pytest.mark.model_small]

AGREE = [
    ("en", "When was George Welch born?", "George Welch was born on May 10, 1918.",
     "He was born on 10 May 1918.", True),
    ("en", "When was George Welch born?", "George Welch was born on May 10, 1918.",
     "George Welch was born in 1954.", False),
    ("zh", "上海男排获得了第几个联赛冠军？", "上海男排获得了第11个联赛冠军。",
     "这是上海男排的联赛第11冠。", True),
    ("zh", "上海男排获得了第几个联赛冠军？", "上海男排获得了第11个联赛冠军。",
     "上海男排获得了第5个联赛冠军。", False),
]
"""(language, question, reference answer, blind answer, the same answer)."""

ANSWERS = [
    ("en", "When was Diane Kruger born?", "What is the birth date of Diane Kruger?",
     "Diane Kruger was born on 15 July 1976.", True),
    ("en", "Who composed the music of The Galapagos Affair?",
     "Who directed The Galapagos Affair?",
     "It was directed by Daniel Geller and Dayna Goldfine.", False),
    ("zh", "上海男排主教练是谁？", "谁带领上海男排夺得联赛冠军？", "主教练沈琼带领上海男排夺冠。",
     True),
    pytest.param("zh", "上海男排的外援来自哪个国家？", "上海男排在决赛中击败了哪支球队？",
                 "上海男排击败了山东男排。", False, marks=pytest.mark.xfail(
                     reason="measured: the 1.5B judge says 1 (a kept row on the same team "
                            "answers it): generate_answers over-drops Chinese unanswerable "
                            "rows", strict=False)),
]
"""(language, the "unanswerable" question, a kept row's question, its answer, it answers)."""


@pytest.fixture(scope="module")
def client(small_judge: Any) -> Any:
    return JudgeClient(OpenJudge(small_judge))


def _ctx(client: Any, lang: str) -> Any:
    return context(Settings(no_cache=True), client, None, Sample(id="real"), lang)


@pytest.mark.parametrize("case", AGREE, ids=lambda c: f"{c[0]}-{c[4]}")
def test_the_judge_says_whether_a_blind_answer_agrees(client: Any, case: tuple) -> None:
    lang, question, reference, answer, same = case
    assert asyncio.run(agrees(_ctx(client, lang), question, reference, answer)) is same


@pytest.mark.parametrize(("lang", "other", "question", "answer", "answers"), ANSWERS,
                         ids=["en-True", "en-False", "zh-True", "zh-False"])
def test_the_judge_says_whether_a_kept_row_answers_another_question(
        client: Any, lang: str, other: str, question: str, answer: str, answers: bool) -> None:
    assert asyncio.run(answers_other(_ctx(client, lang), other, question, answer)) is answers


BRIDGES = [
    ("en", "Michael Mann", "Heat",
     "Heat is a 1995 American crime film written and directed by Michael Mann. It follows a "
     "group of professional bank robbers in Los Angeles.",
     "Michael Mann was born on February 5, 1943, in Chicago. He studied at the London Film "
     "School before directing feature films."),
    ("zh", "陈凯歌", "霸王别姬",
     "《霸王别姬》是一部1993年上映的剧情电影，由陈凯歌执导，讲述两位京剧演员半个世纪的悲欢离合。",
     "陈凯歌，1952年8月12日出生于北京，中国电影导演，毕业于北京电影学院。"),
]
"""(language, the entity, A's subject, text A naming the entity, text B about it)."""


@pytest.mark.parametrize(("lang", "entity", "subject", "text_a", "text_b"), BRIDGES,
                         ids=["en", "zh"])
def test_a_bridge_names_its_entity_only_by_its_role_to_the_first_subject(
        client: Any, lang: str, entity: str, subject: str, text_a: str, text_b: str) -> None:
    """The 1.5B's role of the director to the film makes a clue that writes the film, and the
    question about the director's birth, asked from B, names him only by that clue."""
    from localeval.generate.drafting import draft_bridge

    draft = asyncio.run(draft_bridge(_ctx(client, lang), entity, text_a, text_b,
                                     subject, entity, subject))
    assert draft.clue and subject in draft.clue and entity not in draft.clue, draft
    assert entity in draft.asked and draft.clue in draft.question, draft
    assert entity not in draft.question, draft
