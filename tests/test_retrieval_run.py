"""Retrieval metrics inside `run`: names in results.jsonl, the group, texts without ids, skips."""

from __future__ import annotations

import pytest

from localeval.config import Settings
from localeval.runner import run

ROWS = [
    {"id": "ids", "retrieved_ids": [1, 3, 4], "expected_ids": [1, 2, 3]},
    {"id": "texts", "retrieved_texts": ["AB ", "wjw"], "expected_texts": ["ab", "shs"]},
    {"id": "graded", "retrieved_ids": ["a", "b"], "expected_relevance": {"b": 2, "a": 1}},
    {"id": "none", "question": "no retrieval fields here"},
    {"id": "norel", "retrieved_ids": ["a"], "expected_relevance": {"a": 0}},
]


def test_group_scores_every_name_with_cutoffs() -> None:
    outcome = run(ROWS, None, Settings(metrics=["retrieval"], retrieval_at=[2]))
    ids, texts, graded, none, norel = outcome.records
    assert ids.scores["hit_rate"] == 1.0 and ids.scores["mrr"] == 1.0
    assert ids.scores["precision"] == pytest.approx(2 / 3)
    assert ids.scores["recall"] == pytest.approx(2 / 3)
    assert ids.scores["average_precision"] == pytest.approx((1 + 2 / 2) / 3)
    assert ids.scores["precision@2"] == 1.0 and ids.scores["recall@2"] == pytest.approx(2 / 3)
    assert texts.scores["recall"] == pytest.approx(1 / 2)  # "AB " matches "ab" after normalising
    assert 0 < graded.scores["ndcg"] < 1  # the grade-2 id is ranked second
    assert "needs 'retrieved_ids' or 'retrieved_texts'" in none.skipped["mrr"]
    assert norel.scores["mrr"] is None and "no relevant" in norel.details["mrr"]["unscored_reason"]
    assert outcome.summary["metrics"]["mrr"]["count"] == 3
    assert outcome.summary["metrics"]["mrr@2"]["metric"] == "mrr"


def test_one_metric_by_name_needs_no_model() -> None:
    outcome = run(ROWS[:1], None, Settings(metrics=["mrr"], profile="standard"))
    assert outcome.records[0].scores == {"mrr": 1.0}
    assert outcome.summary["judge"] is None and outcome.summary["models"] == {}
