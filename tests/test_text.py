"""Sentence splitting (Chinese and English), language detection and normalisation."""

from __future__ import annotations

import pytest

from localeval.text import (
    CJK,
    CJK_RANGES,
    detect_language,
    join_sentences,
    no_space_after,
    normalize,
    numbers,
    overlap_words,
    ranking_terms,
    split_sentences,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "美国最高法院作出裁决。三分之一的女性受影响！真的吗？是的；好的……然后呢",
            [
                "美国最高法院作出裁决。",
                "三分之一的女性受影响！",
                "真的吗？",
                "是的；",
                "好的……",
                "然后呢",
            ],
        ),
        ("他说：“我们赢了！”随后离开。", ["他说：“我们赢了！”", "随后离开。"]),
        ("价格是3.5元。好", ["价格是3.5元。", "好"]),
        ("中文;英文", ["中文;", "英文"]),
        (
            "Dr. Smith went to Washington. He arrived at 3 p.m. on Monday. Really? Yes!",
            ["Dr. Smith went to Washington.", "He arrived at 3 p.m. on Monday.", "Really?", "Yes!"],
        ),
        (
            "The U.S. economy grew 3.5% in 2020. Mr. J. R. R. Tolkien wrote it.",
            ["The U.S. economy grew 3.5% in 2020.", "Mr. J. R. R. Tolkien wrote it."],
        ),
        (
            "See Fig. 3 for details, e.g. this one. Done.",
            ["See Fig. 3 for details, e.g. this one.", "Done."],
        ),
        (
            "It is; however, fine. Version 2.0 is out... Great.",
            ["It is; however, fine.", "Version 2.0 is out...", "Great."],
        ),
        ('He said "stop." Then left.', ['He said "stop."', "Then left."]),
        (
            "- 第一条。\n- 第二条\n1. First item\n2) Second item\n（3）第三条\n一、总则",
            ["第一条。", "第二条", "First item", "Second item", "第三条", "总则"],
        ),
        ("Line one\r\nLine two\n\n\nLine three", ["Line one", "Line two", "Line three"]),
        ("96.3 Rock Radio", ["96.3 Rock Radio"]),  # a number, not a list bullet
        ("It premiered in 2011.The album followed. Version 2.0 works.",
         ["It premiered in 2011.", "The album followed.", "Version 2.0 works."]),  # glued
        ("", []),
        ("  \n- \n", []),
    ],
)
def test_split_sentences(text: str, expected: list[str]) -> None:
    assert split_sentences(text) == expected


def test_split_is_deterministic_and_loses_no_words() -> None:
    text = "Acme was founded in 1990 by Ada. It is in Paris! 它很有名。真的？Yes."
    first = split_sentences(text)
    assert first == split_sentences(text)
    assert "".join(first).replace(" ", "") == text.replace(" ", "")


@pytest.mark.parametrize(
    ("texts", "lang"),
    [
        (("美国最高法院关于堕胎的裁决对全球有什么影响?",), "zh"),
        (("What is the capital of France?", "Paris"), "en"),
        (("请解释 BERT 和 GPT 的区别",), "zh"),
        (("The model 通义千问 is large and has many parameters for many tasks",), "en"),
        ((None, ""), "en"),
    ],
)
def test_detect_language(texts: tuple, lang: str) -> None:
    assert detect_language(*texts) == lang


def test_normalize_width_case_whitespace() -> None:
    assert normalize("ＡＢＣ　１２３") == normalize("abc 123") == "abc 123"
    assert normalize("  New\tYork \n") == "new york"


def test_word_count_counts_cjk_as_two_thirds() -> None:
    from localeval.text import word_count

    assert word_count("96.3 Rock Radio") == 3
    assert word_count("It's well-known") == 2
    assert word_count("美国最高法院") == pytest.approx(4.0)


def test_match_key_and_json_safe() -> None:
    from localeval.text import json_safe, match_key

    assert match_key("The U.S. “Army”,  ２０２２") == match_key("the us army 2022")
    assert match_key("the us army 2022") == "theusarmy2022"
    assert json_safe('"Faster" is a single') == "'Faster' is a single"


def test_one_cjk_range_counts_chinese_characters() -> None:
    assert len(CJK.findall("长城 Great Wall 㐀豈")) == 4  # unified, Extension A, compatibility
    assert not CJK.findall("。、，ＡＢ are punctuation and full width, not characters")
    assert "\u3400-\u4dbf" in CJK_RANGES and "\u4e00-\u9fff" in CJK_RANGES


def test_numbers_drop_thousands_separators_only() -> None:
    assert numbers("1,200 people, ３００ m and 3.5 km in 2,5 hours") == {"1200", "300", "3.5",
                                                                       "2,5"}


def test_ranking_terms_have_repeats_and_overlap_words_are_a_set() -> None:
    assert ranking_terms("The tower, the TOWER: 长城很长") == [
        "tower", "tower", "长城", "城很", "很长"]
    assert overlap_words("The tower is 1,200 m; 长城 长") == {"tower", "1200", "长城", "城长"}


def test_no_module_but_text_writes_a_cjk_range_or_a_number_pattern() -> None:
    """One implementation of each (issue 31): metrics/claims/ reads them from localeval.text."""
    from pathlib import Path

    claims = Path(__file__).resolve().parents[1] / "localeval" / "metrics" / "claims"
    assert list(claims.glob("*.py"))
    for path in claims.glob("*.py"):
        source = path.read_text(encoding="utf-8")
        for pattern in ("\\u3400", "\\u4e00", "\\u9fff", "\\d+(?:[.,]"):
            assert pattern not in source, f"{path.name} writes {pattern}"


@pytest.mark.parametrize(("sentences", "joined"), [
    (["它在巴黎。", "它建于1889年。"], "它在巴黎。它建于1889年。"),
    (["It is in Paris.", "It was built in 1889."], "It is in Paris. It was built in 1889."),
    (["塔高300米", "It is tall."], "塔高300米It is tall."),  # after a CJK character: no space
    (["It is 300 m.", "塔很高。"], "It is 300 m. 塔很高。"),  # after a Latin one: a space
    (["서울은 크다.", "정말이다."], "서울은 크다. 정말이다."),  # Hangul spaces its words
    ([], ""),
])
def test_join_sentences_spaces_only_between_non_cjk(sentences: list[str], joined: str) -> None:
    assert join_sentences(sentences) == joined


def test_passages_and_pieces_join_tight_after_any_wide_character() -> None:
    # the rule the judge's prompts (and so the answer cache's keys) were made with: broader than
    # join_sentences, which spaces after Hangul
    assert no_space_after("它在巴黎。") and no_space_after("서울") and no_space_after("…。")
    assert not no_space_after("Paris.") and not no_space_after("") and not no_space_after("\u2e80")


@pytest.mark.parametrize("sentences", [["它在巴黎。", "它建于1889年。"],
                                       ["It is in Paris.", "It was built in 1889."]])
def test_joined_sentences_split_back(sentences: list[str]) -> None:
    assert split_sentences(join_sentences(sentences)) == sentences
