"""The checks that can overrule a verdict of support (metrics/claims/checks.py)."""

from __future__ import annotations

from localeval.metrics.claims.checks import decide, novel_details, spelled_numbers

CONTEXT = ["Insulin was discovered in 1921 by Frederick Banting and Charles Best at the "
           "University of Toronto. Macleod ran the laboratory. It won a Nobel Prize in 1923."]


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


def test_decide_overrules_a_verdict_of_support_that_names_what_the_context_lacks() -> None:
    q = "Who discovered insulin?"
    good = decide("Banting and Best discovered insulin in 1921.", 1, CONTEXT, q)
    assert good.verdict == 1 and good.reason == "the judge found it in the context"
    assert good.closest_sentence and good.closest_sentence.startswith(
        "Insulin was discovered in 1921")
    curie = decide("Marie Curie discovered insulin in 1921.", 1, CONTEXT, q)
    assert curie.verdict == 0 and curie.judge_verdict == 1 and curie.overruled
    assert curie.novel_details == ("Marie", "Curie")
    assert curie.reason == "not in the context: Marie, Curie"
    no = decide("Insulin is blue.", 0, CONTEXT, q, material_name="document")
    assert no.verdict == 0 and no.reason == "the judge found no support in the document"
    # details=False (the material is an answer): a name it lacks does not overrule
    free = decide("Marie Curie discovered insulin.", 1, CONTEXT, q, details=False)
    assert free.verdict == 1 and "novel_details" not in free.as_json()
    # `known`: the whole material, when the item was judged against its passages only
    passages = ["Macleod ran the laboratory."]
    known = decide("Banting worked for Macleod.", 1, passages, q, known=CONTEXT)
    assert known.verdict == 1


def test_a_questions_first_word_is_no_name() -> None:
    assert novel_details("Did Bell patent the telephone in 1876?",
                         ["Bell patented the telephone in 1876."]) == []
    assert novel_details("How did Marconi do it?", ["Bell did it."]) == ["Marconi"]
