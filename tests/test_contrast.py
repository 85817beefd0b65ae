"""A supported claim must beat its twins: a comparative turned round, or a number or name of the
claim swapped for another that the material gives nearby (metrics/support/contrast.py)."""

from __future__ import annotations

import asyncio

from localeval.metrics.support.contrast import check, contradicted, twins, versions
from tests.conftest import run_fake

CONTEXT = ("Marie Curie was born in Warsaw in 1867 and moved to Paris in 1891. "
           "The Vistula is longer than the Oder.")


def test_a_comparative_is_turned_round() -> None:
    assert twins("The Vistula is longer than the Oder.", [CONTEXT], "en")[0] == \
        "The Vistula is shorter than the Oder."
    assert twins("黄河比长江更长。", ["长江比黄河更长。"], "zh") == ["黄河比长江更短。"]


def test_a_detail_is_swapped_for_one_the_context_gives_nearby() -> None:
    assert twins("Marie Curie was born in Paris in 1867.", [CONTEXT], "en") == [
        "Marie Curie was born in Warsaw in 1867.", "Marie Curie was born in Paris in 1891."]
    # a name is swapped only for one after the same word; the subject never
    assert twins("Marie Curie was born in Warsaw in 1891.", [CONTEXT], "en") == [
        "Marie Curie was born in Warsaw in 1867."]
    assert twins("张三于2005年出生。", ["张三于1998年出生在北京，2005年搬到上海。"], "zh") == \
        ["张三于1998年出生。"]


def test_a_fragment_changes_only_its_answer() -> None:
    assert twins("Q: Where was Marie Curie born? A: Paris.", [CONTEXT], "en") == [
        "Q: Where was Marie Curie born? A: Warsaw.", "Q: Where was Marie Curie born? A: Vistula.",
        "Q: Where was Marie Curie born? A: Oder."]
    assert twins("Q: Which is longer? A: The Vistula.", [CONTEXT], "en")[0] == \
        "Q: Which is longer? A: The Oder."  # the question's "longer" stays
    assert twins("问：哪条河更长？ 答：长江更长。", ["长江比黄河更长。"], "zh") == \
        ["问：哪条河更长？ 答：长江更短。"]


def test_a_capitalised_word_inside_a_name_is_no_comparative() -> None:
    assert twins("Leslie West plays guitar.", ["Leslie West plays guitar."], "en") == []


def test_no_twin_without_a_swap_the_material_offers() -> None:
    assert twins("She was a physicist.", [CONTEXT], "en") == []
    assert twins("She was born in 1870.", [CONTEXT], "en") == []  # 1870: not in the material


def test_only_a_twin_the_judge_prefers_contradicts() -> None:
    assert contradicted(0.8, [0.95]) == (0, 0.95)
    assert contradicted(0.95, [0.8, None]) is None
    assert contradicted(0.9, [0.9]) is None  # a tie keeps the verdict


def _probs(*p_yes: float) -> dict:
    return {"verdicts": [{"verdict": 1} for _ in p_yes],
            "_probs": [["verdict", {"1": p, "0": 1 - p}] for p in p_yes]}


ROW = {"id": "c", "question": "Where was Marie Curie born?", "contexts": [CONTEXT]}


def test_a_swapped_city_fails_end_to_end() -> None:
    row = ROW | {"answer": "Marie Curie was born in Paris in 1867."}
    outcome, judge = run_fake([row], [_probs(0.85), _probs(0.97, 0.3)], metrics=["faithfulness"],
                              claims="sentences", contrast=True)
    (rec,) = outcome.records
    (entry,) = rec.details["faithfulness"]["statements"]
    assert len(judge.requests) == 2  # the claim, then its twins in one request
    assert "Marie Curie was born in Warsaw in 1867." in judge.requests[1].messages[-1]["content"]
    assert entry["rule"] == "contrast" and entry["p_claim"] == 0.85
    assert rec.scores["faithfulness"] == 0.0
    assert "Warsaw" in entry["reason"]


def test_a_true_claim_beats_its_twins_end_to_end() -> None:
    row = ROW | {"answer": "Marie Curie was born in Warsaw in 1867."}
    outcome, _ = run_fake([row], [_probs(0.95), _probs(0.2)], metrics=["faithfulness"],
                          claims="sentences", contrast=True)
    (rec,) = outcome.records
    (entry,) = rec.details["faithfulness"]["statements"]
    assert rec.scores["faithfulness"] == 1.0 and entry["rule"] == "judge"
    assert entry["contrast"] == [{"twin": "Marie Curie was born in Warsaw in 1891.",
                                  "p_supported": 0.2}]


def test_unsupported_claims_get_no_twins() -> None:
    calls: list[list[str]] = []

    async def ask(claims: list[str], texts: list[str]) -> list[dict]:
        calls.append(claims)
        return [{"verdict": 1, "_p": 0.9} for _ in claims]

    result = [{"verdict": 0, "p_supported": 0.2}]
    asyncio.run(check(["The Vistula is longer than the Oder."], result, {0: [CONTEXT]}, ask,
                      "en", 16))
    assert calls == [] and result[0]["verdict"] == 0


def test_the_versions_shown_do_not_depend_on_which_one_is_the_claim() -> None:
    right, wrong = "She grew up in Hamburg.", "She grew up in Vienna."
    assert versions(right, [wrong]) == versions(wrong, [right]) == [right, wrong]


def _choice(*p: float) -> dict:
    return {"choice": 1 + max(range(len(p)), key=lambda k: p[k]),
            "_probs": [["choice", {str(k + 1): q for k, q in enumerate(p)}]]}


def test_a_claim_the_judge_does_not_choose_among_its_twins_fails_end_to_end() -> None:
    row = ROW | {"answer": "Marie Curie was born in Warsaw in 1891."}
    # shown "… in 1867." and "… in 1891." together (sorted), the judge picks the first
    outcome, judge = run_fake([row], [_probs(0.9), _choice(0.7, 0.3)], metrics=["faithfulness"],
                              claims="sentences", contrast=True, contrast_style="choice")
    (rec,) = outcome.records
    (entry,) = rec.details["faithfulness"]["statements"]
    assert len(judge.requests) == 2 and judge.requests[1].step == "support_choice"
    shown = judge.requests[1].messages[-1]["content"]
    assert "1. Marie Curie was born in Warsaw in 1867.\n2. Marie Curie was born in Warsaw in " \
           "1891." in shown
    assert entry["rule"] == "contrast" and entry["verdict"] == 0 and entry["p_claim"] == 0.9
    assert rec.scores["faithfulness"] == 0.0
    assert entry["choice"] == [{"version": "Marie Curie was born in Warsaw in 1867.", "p": 0.7},
                               {"version": "Marie Curie was born in Warsaw in 1891.", "p": 0.3}]


def test_a_claim_the_judge_chooses_keeps_its_verdict() -> None:
    row = ROW | {"answer": "Marie Curie was born in Warsaw in 1867."}
    outcome, _ = run_fake([row], [_probs(0.9), _choice(0.8, 0.2)], metrics=["faithfulness"],
                          claims="sentences", contrast=True, contrast_style="choice")
    (rec,) = outcome.records
    (entry,) = rec.details["faithfulness"]["statements"]
    assert rec.scores["faithfulness"] == 1.0 and entry["rule"] == "judge"
    assert entry["choice"][0]["p"] == 0.8
