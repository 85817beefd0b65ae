"""The one BM25 (localeval/bm25.py): what it ranks first, its ties, and that the evidence step
and the generator's corpus lookup both rank with it."""

from __future__ import annotations

import math

from localeval.bm25 import BM25
from localeval.text import ranking_terms


def index(texts: list[str], k1: float = 1.5) -> BM25:
    return BM25([ranking_terms(t) for t in texts], k1=k1)


def test_bm25_finds_the_text_that_shares_the_question_s_words() -> None:
    texts = ["围棋起源于中国，已有四千多年历史。", "大熊猫每天吃十二到三十八公斤竹子。",
             "The library opens at nine."]
    bm25 = index(texts)
    assert bm25.top(set(ranking_terms("围棋的起源地点是什么？")), 2)[0] == 0
    assert bm25.top(set(ranking_terms("大熊猫每天吃多少竹子？")), 1) == [1]
    assert bm25.top(set(ranking_terms("When does the library open?")), 1) == [2]
    assert bm25.top(set(ranking_terms("无关")), 2) == []  # no shared term: nothing, not a guess


def test_a_score_is_okapi_bm25_and_ties_keep_the_earlier_text() -> None:
    bm25 = BM25([["otter", "river"], ["otter"], ["heron"]], k1=1.2, b=0.75)
    idf = math.log(1 + (3 - 2 + 0.5) / (2 + 0.5))
    avg = 4 / 3
    expected = [idf * 1 * 2.2 / (1 + 1.2 * (0.25 + 0.75 * n / avg)) for n in (2, 1)]
    assert bm25.scores({"otter"})[:2] == expected and bm25.scores({"otter"})[2] == 0.0
    assert bm25.ranked({"otter"}) == [1, 0, 2]  # the shorter text holding it first
    same = BM25([["a"], ["a"]], k1=1.2)
    assert same.ranked({"a"}) == [0, 1]
    assert same.scores({"a"}) == same.scores({"a"})  # a query is a set: repeats count once


def test_the_evidence_step_and_the_generator_rank_with_it() -> None:
    from localeval.generate import tasks
    from localeval.metrics.claims import evidence
    from localeval.text import sentences_of_all

    material = sentences_of_all(["The survey counted 41 otters near Weir 7. Herons nest upstream.",
                          "Ducks feed in the shallows."])
    built = evidence.Index.build(material)
    assert isinstance(built.bm25, BM25)
    assert built.bm25.ranked(set(ranking_terms("How many otters were counted?")))[0] == 0
    assert tasks.BM25 is BM25
