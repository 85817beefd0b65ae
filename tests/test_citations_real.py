"""citation_recall / citation_precision on the 1.5B judge, clear cases in en and zh: a sentence
cited to the passage that holds it, the same sentence cited to a passage about something else,
a needless second citation, and a sentence that states no fact.

Heavy: run under the CPU lock, e.g.
    flock /tmp/localeval-cpu.lock .venv/bin/python -m pytest -m model_small \
        tests/test_citations_real.py
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from localeval.config import Settings
from localeval.models.embed import HashEmbedder
from tests.conftest import OpenJudge

pytestmark = [pytest.mark.model, pytest.mark.model_small]

CASES = {
    "en": {
        "question": "When was the Eiffel Tower built, and how tall is it?",
        "contexts": ["The Eiffel Tower was built between 1887 and 1889 for the World's Fair.",
                     "The Eiffel Tower is 330 metres tall.",
                     "The Great Wall of China is more than 20,000 kilometres long."],
        "right": "The Eiffel Tower was built between 1887 and 1889 [1]. It is 330 metres tall "
                 "[2]. I hope this helps!",
        "moved": "The Eiffel Tower was built between 1887 and 1889 [3]. It is 330 metres tall "
                 "[2]. I hope this helps!",
        "overcite": "The Eiffel Tower was built between 1887 and 1889 [1][3]. It is 330 metres "
                    "tall [2]. I hope this helps!",
    },
    "zh": {
        "question": "埃菲尔铁塔是哪一年建成的？有多高？",
        "contexts": ["埃菲尔铁塔于1887年至1889年间为世界博览会建造。",
                     "埃菲尔铁塔高330米。",
                     "长城全长超过两万公里。"],
        "right": "埃菲尔铁塔建于1887年至1889年【1】。铁塔高330米【2】。希望对你有帮助！",
        "moved": "埃菲尔铁塔建于1887年至1889年【3】。铁塔高330米【2】。希望对你有帮助！",
        "overcite": "埃菲尔铁塔建于1887年至1889年【1】【3】。铁塔高330米【2】。希望对你有帮助！",
    },
}


def _run(judge: Any, case: dict[str, Any], cache: Path) -> dict[str, Any]:
    from localeval.runner import run

    rows = [{"id": v, "question": case["question"], "answer": case[v],
             "contexts": case["contexts"]} for v in ("right", "moved", "overcite")]
    # a fresh cache: the three answers share most of their requests (asked once)
    outcome = run(rows, None, Settings(cache=cache, metrics=["citations"], explain=False),
                  judge=OpenJudge(judge), embedder=HashEmbedder())
    for rec in outcome.records:
        assert not rec.errors, rec.errors
    return {rec.id: rec for rec in outcome.records}


@pytest.mark.parametrize("lang", ["en", pytest.param("zh", marks=pytest.mark.xfail(
    reason="measured 2026-12-02: the 1.5B judge says the zh closing remark '希望对你有帮助！' "
           "states a fact (citations_fact, with the short-answer example; P(fact) 0.32 "
           "without it), so citation_recall of the right answer is 2/3", strict=False))])
def test_a_citation_to_the_right_passage_holds_and_a_moved_one_does_not(  # type: ignore[no-untyped-def]
        small_judge, lang: str, tmp_path: Path) -> None:
    recs = _run(small_judge, CASES[lang], tmp_path / "answers.sqlite")
    right, moved, over = recs["right"], recs["moved"], recs["overcite"]
    facts = [r["fact"] for r in right.details["citation_recall"]["sentences"]]
    assert facts == [1, 1, 0], right.details  # the closing remark states no fact
    assert right.scores["citation_recall"] == 1.0, right.details
    assert right.scores["citation_precision"] == 1.0, right.details
    assert moved.scores["citation_recall"] == 0.5, moved.details
    assert moved.scores["citation_precision"] == 0.5, moved.details
    assert over.scores["citation_recall"] == 1.0, over.details
    holds = {c["passage"]: c["holds"] for c in over.details["citation_precision"]["citations"]
             if c["sentence"] == 1}
    assert holds == {1: 1, 3: 0}, over.details
