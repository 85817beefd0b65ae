"""The mechanical checks behind a support verdict (metrics/support/evidence.py)."""

from __future__ import annotations

from localeval.metrics.support.evidence import (
    coverage,
    decide,
    locate,
    novel_details,
    spelled_numbers,
)

CONTEXT = ["Insulin was discovered in 1921 by Frederick Banting and Charles Best at the "
           "University of Toronto. Macleod ran the laboratory. It won a Nobel Prize in 1923."]


def test_a_copy_is_found_and_expanded_to_its_sentences() -> None:
    quote = "insulin was discovered in 1921 by Frederick Banting and Charles Best"
    assert locate(quote, CONTEXT) == [
        "Insulin was discovered in 1921 by Frederick Banting and Charles Best at the "
        "University of Toronto."]
    cut = "It won a Nobel Prize in 19"  # cut short by the schema's length limit
    assert locate(cut, CONTEXT) == ["It won a Nobel Prize in 1923."]


def test_a_parroted_statement_or_a_changed_number_is_not_found() -> None:
    parrot = "Insulin was discovered by Marie Curie in 1935 in Paris"
    assert coverage(parrot, CONTEXT) < 0.8 and locate(parrot, CONTEXT) is None
    assert locate("It won a Nobel Prize in 1925.", CONTEXT) is None  # fuzzy, but 1925 ≠ 1923
    assert locate("none", CONTEXT) is None and locate("无", CONTEXT) is None


def test_chinese_copy_with_other_punctuation_and_width_is_found() -> None:
    context = ["本月10日，上海男排主场3：1力克山东男排，从而获胜。这是联赛第11冠。"]
    assert locate("本月１０日上海男排主场3:1力克山东男排", context) == [
        "本月10日，上海男排主场3：1力克山东男排，从而获胜。"]


def test_novel_details_are_numbers_and_names_the_texts_lack() -> None:
    assert novel_details("Marie Curie discovered insulin in 1935 in Paris.", CONTEXT) == [
        "1935", "Marie", "Curie", "Paris"]
    assert novel_details("Banting was American.", ["Banting worked in America."]) == []
    assert novel_details("上海男排第17届联赛夺冠。", ["上海男排获得联赛第11冠。"]) == ["17"]
    assert novel_details("It aired on E4.", ["It aired on Channel 4."]) == ["E4"]


def test_a_number_the_material_spells_out_is_no_novel_detail() -> None:
    assert novel_details("Their daughter, 9, and son, 23, were there.",
                         ["Their nine-year-old daughter and twenty-three-year-old son."]) == []
    assert novel_details("乙公司比甲公司早5年成立。",
                         ["乙公司成立于1998年，比甲公司早五年。"]) == []
    assert novel_details("Their daughter, 8, was there.", ["Their nine-year-old daughter."]) == \
        ["8"]
    # the 一 of 一些 and the 十 of 十分 are no numbers: only a numeral before a unit counts
    assert spelled_numbers("一些人十分高兴，三百零五名学生，二十年") == {"305", "20"}


def test_decide_overrules_unfounded_support_and_says_why() -> None:
    q = "Who discovered insulin?"
    good = decide("Banting and Best discovered insulin in 1921.",
                  {"evidence": "Insulin was discovered in 1921 by Frederick Banting and "
                               "Charles Best", "verdict": 1}, CONTEXT, q, check_evidence=True)
    assert good["verdict"] == 1 and good["reason"] == "supported by the quoted context"
    parrot = decide("Marie Curie discovered insulin.", {
        "evidence": "Marie Curie discovered insulin.", "verdict": 1}, CONTEXT, q,
        check_evidence=True)
    assert parrot["verdict"] == 0 and parrot["judge_verdict"] == 1
    assert "quote is not in the context" in parrot["reason"] and "Marie, Curie" in parrot["reason"]
    elsewhere = decide("Insulin won a Nobel Prize in 1923.", {
        "evidence": "Insulin was discovered in 1921 by Frederick Banting", "verdict": 1},
        CONTEXT, q, check_evidence=True)  # 1923 is in the context, not in the quoted sentence
    assert elsewhere["verdict"] == 0 and "not in the quoted evidence: 1923" in elsewhere["reason"]
    no = decide("Insulin is blue.", {"evidence": "none", "verdict": 0}, CONTEXT, q,
                check_evidence=True)
    assert no["verdict"] == 0 and no["reason"] == "the context has nothing on it (evidence: none)"
    bare = decide("Insulin was found in 1921.", {"verdict": 1}, CONTEXT, q, check_evidence=False)
    assert bare["verdict"] == 1 and "evidence_found" not in bare
