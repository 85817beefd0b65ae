"""The per-row retrieval scorer (plain Python) against the vectorised one: equal bit for bit."""

from __future__ import annotations

import random

import pytest

from localeval.retrieval import (
    GAINS,
    IDEALS,
    NO_RELEVANT_REASON,
    RETRIEVAL_METRICS,
    evaluate_report,
    score_query,
)


def _case(rng: random.Random) -> tuple[list[str], list[str] | dict[str, float]]:
    pool = [f"d{i}" for i in range(rng.randint(1, 40))]
    retrieved = [rng.choice(pool) for _ in range(rng.randint(0, 30))]  # repeats on purpose
    picked = rng.sample(pool, rng.randint(1, min(len(pool), 8)))
    if rng.random() < 0.5:
        return retrieved, picked
    grades = [0, 1, 2, 3, 0.5, 2.25, -1, 7]
    return retrieved, {d: rng.choice(grades) for d in picked}


@pytest.mark.parametrize("seed", range(4))
def test_score_query_equals_evaluate_report_bit_for_bit(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(500):
        retrieved, expected = _case(rng)
        at = tuple(sorted(set(rng.sample([1, 2, 3, 5, 10, 20, 100], rng.randint(0, 3)))))
        gain, ideal = rng.choice(GAINS), rng.choice(IDEALS)
        metrics = rng.sample(RETRIEVAL_METRICS, rng.randint(1, len(RETRIEVAL_METRICS)))
        fast, reason = score_query(retrieved, expected, at=at, gain=gain, ideal=ideal,
                                   metrics=metrics)
        grades = expected if isinstance(expected, dict) else dict.fromkeys(expected, 1)
        report = evaluate_report({"q": grades}, {"q": retrieved}, metrics=metrics, at=at,
                                 gain=gain, ideal=ideal)
        slow = report.per_query["q"]
        assert list(fast) == list(slow)  # same keys, same order
        assert fast == slow, (retrieved, expected, at, gain, ideal)
        assert reason == (NO_RELEVANT_REASON if report.skipped else None)


def test_long_lists_use_the_same_discounts() -> None:
    retrieved = [f"d{i}" for i in range(3000)]
    expected = {f"d{i}": (i % 4) for i in range(0, 3000, 7)}
    for gain in GAINS:
        fast, _ = score_query(retrieved, expected, gain=gain, at=(10, 1000))
        slow = evaluate_report({"q": expected}, {"q": retrieved}, gain=gain, at=(10, 1000))
        assert fast == slow.per_query["q"]


def test_rows_matched_on_ids_carry_no_details() -> None:
    from localeval.config import Settings
    from localeval.runner import run

    rows = [{"id": "ids", "retrieved_ids": ["a", "b"], "expected_ids": ["b"]},
            {"id": "texts", "retrieved_texts": ["AB "], "expected_texts": ["ab"]}]
    ids, texts = run(rows, None, Settings(metrics=["retrieval"], retrieval_at=[5])).records
    assert ids.details == {} and ids.scores["mrr@5"] == 0.5
    assert texts.details["ndcg"] == {"matched_on": "texts"} and texts.scores["mrr"] == 1.0
