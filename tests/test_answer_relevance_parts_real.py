"""Issue 41 item 12 on the 1.5B judge: answer_relevance's parts of a question that asks one
thing are one part, so a direct, correct answer is not lowered by parts the question never asked
(before, "A spider has eight legs." scored 0.474: the judge added the spider's scientific name
and lifespan); a question that asks two things keeps both, and the answer that gives one of
them scores below the one that gives both. en and zh; the small profile's embedder.

    flock /tmp/localeval-cpu.lock .venv/bin/python -m pytest \
        tests/test_answer_relevance_parts_real.py -m "model_small" -q
"""

from __future__ import annotations

from typing import Any

import pytest

from localeval.config import Settings
from tests.conftest import OpenJudge

pytestmark = [pytest.mark.model_small, pytest.mark.embedder]

SINGLE = {
    "en legs": ("How many legs does a spider have?", "A spider has eight legs."),
    "en river": ("Where does the Rhine flow?", "The Rhine flows from the Swiss Alps through "
                 "Germany and the Netherlands into the North Sea."),
    "en capital": ("What is the capital of France?", "The capital of France is Paris."),
    "en painter": ("Who painted the Mona Lisa?", "Leonardo da Vinci painted the Mona Lisa."),
    "en symbol": ("What is the chemical symbol for gold?", "The chemical symbol for gold is Au."),
    "en year": ("In which year did the Berlin Wall fall?", "The Berlin Wall fell in 1989."),
    "en height": ("How tall is Mount Everest?", "Mount Everest is about 8,849 metres tall."),
    "en language": ("What language is spoken in Brazil?",
                    "Portuguese is the language spoken in Brazil."),
    "zh height": ("珠穆朗玛峰有多高？", "珠穆朗玛峰海拔约8849米。"),
    "zh author": ("《西游记》的作者是谁？", "《西游记》的作者是吴承恩。"),
    "zh capital": ("日本的首都是哪里？", "日本的首都是东京。"),
    "zh days": ("一年有多少天？", "一年通常有365天，闰年有366天。"),
    "zh formula": ("水的化学式是什么？", "水的化学式是H2O。"),
}
"""Questions that ask one thing, each with a direct, correct answer."""

MULTI = {
    "en titanic": ("When did the Titanic sink, and how many people died?",
                   "The Titanic sank on 15 April 1912, and about 1,500 people died.",
                   "The Titanic sank on 15 April 1912."),
    "en hamlet": ("Who wrote Hamlet and when was it written?",
                  "William Shakespeare wrote Hamlet around 1600.",
                  "William Shakespeare wrote Hamlet."),
    "zh wall": ("长城有多长？是哪个朝代修建的？",
                "长城全长约21196公里，现存的主要部分是明朝修建的。", "长城全长约21196公里。"),
    "zh luxun": ("鲁迅的原名是什么？他出生在哪里？",
                 "鲁迅原名周树人，出生在浙江绍兴。", "鲁迅原名周树人。"),
}
"""Questions that ask two things: (question, complete answer, answer that gives one part)."""


@pytest.fixture(scope="module")
def scored(small_embedder: Any) -> dict[str, Any]:
    """Every row of SINGLE and MULTI through answer_relevance in one run, on a 1.5B judge of
    this module's own (a run closes the judge it is handed, and other modules hand runs the
    session's): id → record."""
    from localeval.runner import run
    from tests.conftest import _llama_judge

    rows = [{"id": k, "question": q, "answer": a} for k, (q, a) in SINGLE.items()]
    rows += [{"id": f"{k}/{side}", "question": q, "answer": a}
             for k, (q, *answers) in MULTI.items()
             for side, a in zip(("complete", "partial"), answers, strict=True)]
    judge = _llama_judge("small", n_ctx=4096)
    try:
        outcome = run(rows, None, Settings(no_cache=True, metrics=["answer_relevance"]),
                      judge=OpenJudge(judge), embedder=small_embedder)
    finally:
        judge.close()
    return {r.id: r for r in outcome.records}


def completeness(record: Any) -> float:
    """The completeness factor: the mean P(the answer gives the part)."""
    parts = record.details["answer_relevance"]["parts"]
    return sum(p["p_answered"] for p in parts) / len(parts)


@pytest.mark.parametrize("case", sorted(SINGLE))
def test_a_question_that_asks_one_thing_is_one_part(scored: dict[str, Any], case: str) -> None:
    record = scored[case]
    assert not record.errors, record.errors
    details = record.details["answer_relevance"]
    assert len(details["parts"]) == 1, details["parts"]
    assert completeness(record) >= 0.8, details["parts"]


@pytest.mark.parametrize("case", sorted(MULTI))
def test_a_question_that_asks_two_things_keeps_both_and_ranks_the_partial_answer_lower(
        scored: dict[str, Any], case: str) -> None:
    complete, partial = scored[f"{case}/complete"], scored[f"{case}/partial"]
    assert not complete.errors and not partial.errors
    assert len(complete.details["answer_relevance"]["parts"]) == 2
    assert len(partial.details["answer_relevance"]["parts"]) == 2
    # the score, not the completeness factor alone: the 1.5B judge gives "William Shakespeare
    # wrote Hamlet." P 0.77 of saying when it was written (the complete answer 0.74); the
    # generated questions' related share (0.65 against 0.98) puts that pair right
    assert partial.scores["answer_relevance"] < complete.scores["answer_relevance"]
