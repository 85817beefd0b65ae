"""The conversation metrics and the standalone question on the 1.5B judge, clear cases in en
and zh: a vegetarian offered pancetta (en) or braised pork (zh), a second question turned
away, a follow-up whose "it" is the tower of the first.

    flock /tmp/localeval-cpu.lock .venv/bin/python -m pytest -m model_small \
        tests/test_conversation_real.py
"""

from __future__ import annotations

from typing import Any

import pytest

from localeval.config import Settings
from localeval.models.embed import HashEmbedder
from localeval.runner import run
from tests.conftest import OpenJudge

pytestmark = pytest.mark.model_small

RETENTION = {
    "en": ("I am vegetarian. Can you suggest a pasta dish for tonight?",
           "Try spaghetti with tomato, basil and roasted aubergine.",
           "Try spaghetti carbonara with plenty of crispy pancetta and bacon."),
    "zh": ("我吃素，不吃任何肉。今晚做什么菜好？", "可以做素食版的麻婆豆腐，用香菇丁代替肉末。",
           "推荐红烧肉，用五花猪肉慢炖两个小时。"),
}
COMPLETENESS = {
    "en": ("How tall is the Eiffel Tower?", "The Eiffel Tower is 330 metres tall.",
           "In which year did it open?", "It opened in 1889.",
           "I'm not sure about that one. Is there anything else I can help you with?"),
    "zh": ("埃菲尔铁塔有多高？", "埃菲尔铁塔高330米。", "它是哪一年开放的？",
           "埃菲尔铁塔于1889年开放。",
           "这个我不太清楚。还有什么别的可以帮你的吗？"),
}


def score(judge: Any, rows: list[dict], metric: str) -> dict[str, Any]:
    outcome = run(rows, None, Settings(metrics=[metric], no_cache=True),
                  judge=OpenJudge(judge), embedder=HashEmbedder())
    return {r.id: r for r in outcome.records}


@pytest.mark.parametrize("lang", ["en", pytest.param("zh", marks=pytest.mark.xfail(
    strict=False, reason="measured 2026-12-02: the 1.5B calls 红烧肉 vegetarian (retained 1, "
    "P 0.9985), and before it said amoxicillin suits a penicillin allergy"))])
def test_knowledge_retention_catches_a_forgotten_fact(small_judge, lang: str) -> None:  # type: ignore[no-untyped-def]
    ask, kept, broken = RETENTION[lang]
    rows = [{"id": which, "turns": [{"role": "user", "content": ask},
                                    {"role": "assistant", "content": reply}]}
            for which, reply in (("kept", kept), ("broken", broken))]
    got = score(small_judge, rows, "knowledge_retention")
    assert got["kept"].scores["knowledge_retention"] == 1.0, got["kept"].details
    assert got["broken"].scores["knowledge_retention"] == 0.0, got["broken"].details


@pytest.mark.parametrize("lang", ["en", pytest.param("zh", marks=pytest.mark.xfail(
    strict=False, reason="measured 2026-12-02: the 1.5B says '它于1889年开放' does not give "
    "the year it opened (met 0)"))])
def test_conversation_completeness_counts_a_request_turned_away(small_judge, lang: str) -> None:  # type: ignore[no-untyped-def]
    q1, a1, q2, met, away = COMPLETENESS[lang]
    rows = [{"id": which, "turns": [{"role": "user", "content": q1},
                                    {"role": "assistant", "content": a1},
                                    {"role": "user", "content": q2},
                                    {"role": "assistant", "content": reply}]}
            for which, reply in (("met", met), ("away", away))]
    got = score(small_judge, rows, "conversation_completeness")
    assert got["met"].scores["conversation_completeness"] == 1.0, got["met"].details
    assert got["away"].scores["conversation_completeness"] == 0.5, got["away"].details


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_standalone_question_names_what_it_refers_to(small_judge, lang: str) -> None:  # type: ignore[no-untyped-def]
    q1, a1, q2, met, _ = COMPLETENESS[lang]
    row = {"id": "c", "turns": [
        {"role": "user", "content": q1},
        {"role": "assistant", "content": a1, "contexts": [a1]},
        {"role": "user", "content": q2},
        {"role": "assistant", "content": met, "contexts": [met]}]}
    record = score(small_judge, [row], "faithfulness")["c"]
    standalone = record.details["turns"][1]["standalone"]
    assert ("Eiffel" if lang == "en" else "埃菲尔") in standalone, standalone
