"""Sentences settled without the judge: questions, and whole sentences quoted from the material."""

from __future__ import annotations

from localeval.metrics.claims.split import is_question
from localeval.metrics.claims.split import quoted_in as quoted_in_split
from localeval.text import sentences_of_all


def quoted_in(sentence: str, material: list[str]) -> bool:
    return quoted_in_split(sentence, sentences_of_all(material))

ZH = "新华社上海2月19日电。本月10日，上海男排主场3：1力克山东男排，从而以总比分3：1获胜。"


def test_questions_in_both_languages() -> None:
    assert is_question("Who was born first?")
    assert is_question("谁先出生？")
    assert is_question('He asked: "is it red?"')
    assert not is_question("It is red.") and not is_question("是红色的。")


def test_a_whole_sentence_is_quoted_whatever_its_spaces_and_punctuation() -> None:
    assert quoted_in("本月10日, 上海男排主场3:1力克山东男排, 从而以总比分3:1获胜。", [ZH])
    en = "The tower was completed in 1889 by a large team of workers."
    assert quoted_in("The tower was  completed in 1889 by a large team of workers!",
                     ["Intro. " + en + " More."])
    assert not quoted_in("The tower was completed in 1890 by a large team of workers.", [en])


def test_short_sentences_and_fragments_are_never_quotes() -> None:
    short = "上海男排主场获胜。"  # under 15 characters
    assert not quoted_in(short, ["本月10日，上海男排主场获胜。"])
    title = "Harry Potter and the Half Blood Prince and the Deathly Hallows"
    assert not quoted_in(title, [f"He read {title}. It was long."])  # no sentence end: a fragment
