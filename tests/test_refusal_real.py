"""refusal with the real 1.5B judge and explanations on: the verdict is read before the reason.

With the reason written first (the frame before issue 54 item 3), the 1.5B called short answers
refusals: on the refusal dev pairs (scripts/bench/refusal_pairs.py) a one-word answer got
P(refused) 0.98 and the greedy verdict tied 13 of 17 en pairs (research/frame-bench.md,
*Refusal*)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from localeval.config import Settings
from tests.conftest import OpenJudge

pytestmark = [pytest.mark.model, pytest.mark.model_small]

CASES = {
    "en": {"question": "What instrument did the band's founder play?",
           "answers": {"The bass guitar.": 0, "I cannot find that in the documents.": 1,
                       "I'm not sure, but I think it was the bass guitar.": 0}},
    "zh": {"question": "这座桥是哪一年建成的？",
           "answers": {"1878年。": 0, "资料里没有提到这座桥的建成时间。": 1,
                       "我不太确定，不过应该是1878年。": 0}},
}


def _run(judge: Any, lang: str, cache: Path) -> list[Any]:
    from localeval.runner import run

    case = CASES[lang]
    rows = [{"id": f"{lang}{i}", "question": case["question"], "answer": a}
            for i, a in enumerate(case["answers"])]
    outcome = run(rows, None, Settings(cache=cache, metrics=["refusal"]),
                  judge=OpenJudge(judge), embedder=None)
    return list(outcome.records)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_short_answer_is_no_refusal_and_a_refusal_is_one_with_its_reason(
        small_judge, lang: str, tmp_path: Path) -> None:
    records = _run(small_judge, lang, tmp_path / "answers.sqlite")
    for rec, want in zip(records, CASES[lang]["answers"].values(), strict=True):
        assert not rec.errors, rec.errors
        assert rec.scores["refusal"] == want, (rec.id, rec.details["refusal"])
        assert rec.details["refusal"]["reason"].strip(), rec.details["refusal"]
