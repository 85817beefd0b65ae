"""The diagnosis metrics on the 1.5B judge, one clear case per language in which every class of
claim occurs once: a claim copied from the relevant context that the ground truth lacks
(relevant noise), one from the irrelevant context (irrelevant noise), one neither holds
(hallucination), one the ground truth holds and no context (self-knowledge), one both hold.

Heavy: run under the CPU lock, e.g.
    flock /tmp/localeval-cpu.lock .venv/bin/python -m pytest -m model tests/test_diagnosis_real.py
"""

from __future__ import annotations

from typing import Any

import pytest

from localeval.config import Settings
from localeval.models.embed import HashEmbedder
from tests.conftest import OpenJudge

pytestmark = pytest.mark.model

LANGS = ["en", pytest.param("zh", marks=pytest.mark.xfail(
    strict=False, reason="measured 2026-12-02 on the 1.5B judge: answer_correctness_reference "
                         "finds 埃菲尔铁塔于1889年建成 stated by an answer that never names 1889 "
                         "(the novel-detail check is off for that step), and one of the two "
                         "noise claims is not classed as noise (noise_sensitivity 0.2, not "
                         "0.4); en passes every check"))]
""""en" passes; "zh" is a known miss of the judge, run and reported (an XPASS when it passes)."""

METRICS = ["claim_recall", "context_utilization", "noise_sensitivity", "hallucination",
           "self_knowledge"]
CASES = {
    "en": {
        "id": "eiffel-en", "question": "What do you know about the Eiffel Tower?",
        "ground_truth": "The Eiffel Tower is in Paris. The Eiffel Tower was completed in 1889. "
                        "The Eiffel Tower is 330 metres tall.",
        "contexts": ["The Eiffel Tower is a wrought-iron tower in Paris. Its construction was "
                     "completed in 1889. The company of Gustave Eiffel designed the tower.",
                     "The Statue of Liberty stands in New York Harbor. It was a gift from "
                     "France to the United States."],
        "answer": "The Eiffel Tower is in Paris. The company of Gustave Eiffel designed the "
                  "Eiffel Tower. The Statue of Liberty stands in New York Harbor. The Eiffel "
                  "Tower is painted bright green every year. The Eiffel Tower is 330 metres "
                  "tall.",
    },
    "zh": {
        "id": "eiffel-zh", "question": "介绍一下埃菲尔铁塔。",
        "ground_truth": "埃菲尔铁塔位于法国巴黎。埃菲尔铁塔于1889年建成。埃菲尔铁塔高约330米。",
        "contexts": ["埃菲尔铁塔是位于法国巴黎的一座铁塔。它于1889年建成。"
                     "这座铁塔由古斯塔夫·埃菲尔的公司设计。",
                     "自由女神像矗立在美国纽约港。它是法国赠送给美国的礼物。"],
        "answer": "埃菲尔铁塔位于法国巴黎。埃菲尔铁塔由古斯塔夫·埃菲尔的公司设计。"
                  "自由女神像矗立在美国纽约港。埃菲尔铁塔每年都被漆成亮绿色。埃菲尔铁塔高约330米。",
    },
}


@pytest.fixture(scope="module")
def records(small_judge) -> dict[str, Any]:  # type: ignore[no-untyped-def]
    from localeval.runner import run

    outcome = run(list(CASES.values()), None,
                  Settings(no_cache=True, metrics=METRICS, explain=False),
                  judge=OpenJudge(small_judge), embedder=HashEmbedder())
    out = {}
    for rec in outcome.records:
        assert not rec.errors, rec.errors
        out[rec.language] = rec
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_each_answer_claim_gets_its_class(records: dict[str, Any], lang: str) -> None:
    claims = records[lang].details["noise_sensitivity"]["answer_claims"]
    assert [c["class"] for c in claims] == ["supported", "noise_relevant", "noise_irrelevant",
                                           "hallucination", "self_knowledge"], claims


@pytest.mark.parametrize("lang", LANGS)
def test_each_ground_truth_claim_gets_its_class(records: dict[str, Any], lang: str) -> None:
    claims = records[lang].details["context_utilization"]["truth_claims"]
    assert [c["class"] for c in claims] == ["used", "unused", "not_retrieved"], claims


@pytest.mark.parametrize("lang", LANGS)
def test_each_metric_on_the_clear_case(records: dict[str, Any], lang: str) -> None:
    expected = {
        "claim_recall": 2 / 3, "context_utilization": 0.5, "noise_sensitivity": 0.4,
        "noise_sensitivity.relevant": 0.2, "noise_sensitivity.irrelevant": 0.2,
        "hallucination": 0.2, "self_knowledge": 0.2}
    scores = records[lang].scores
    assert {k: scores.get(k) for k in expected} == pytest.approx(expected)
    assert {k: scores.get(k + ".greedy") for k in expected} == pytest.approx(expected)
    weighted = {k: scores.get(k + ".weighted") for k in expected}  # the judge's P: in [0, 1]
    assert all(w is not None and 0.0 <= w <= 1.0 for w in weighted.values()), weighted
