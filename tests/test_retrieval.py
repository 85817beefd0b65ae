"""Retrieval metrics: hand-computed cases, edge cases, properties, and pytrec_eval agreement."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from localeval.retrieval import (
    NO_RELEVANT_REASON,
    RETRIEVAL_METRICS,
    RetrievalOptionError,
    evaluate,
    evaluate_report,
    mean_scores,
    metric_names,
    score_query,
    score_texts,
)
from localeval.retrieval.trec import rank

L2, L3, L4, L5 = math.log2(2), math.log2(3), math.log2(4), math.log2(5)


def approx(x: float) -> object:
    return pytest.approx(x, abs=1e-12)


# --------------------------------------------------------------------------- hand-computed


def test_binary_every_metric_by_hand() -> None:
    # hits at ranks 1 and 3; "d" is relevant but not retrieved; "c" is not relevant
    scores, reason = score_query(["a", "x", "b", "y", "c"], ["a", "b", "d"], at=(2, 10))
    assert reason is None
    assert scores == {
        "hit_rate": 1.0,
        "hit_rate@2": 1.0,
        "hit_rate@10": 1.0,
        "hit_rate_granular": approx(2 / 3),
        "hit_rate_granular@2": approx(1 / 3),
        "hit_rate_granular@10": approx(2 / 3),
        "mrr": 1.0,
        "mrr@2": 1.0,
        "mrr@10": 1.0,
        "mrr_granular": approx((1 + 1 / 3) / 2),
        "mrr_granular@2": 1.0,
        "mrr_granular@10": approx((1 + 1 / 3) / 2),
        "precision": approx(2 / 5),
        "precision@2": approx(1 / 2),
        "precision@10": approx(2 / 10),  # trec_eval P_10: divides by k, not by |R|
        "recall": approx(2 / 3),
        "recall@2": approx(1 / 3),
        "recall@10": approx(2 / 3),
        "average_precision": approx((1 / 1 + 2 / 3) / 3),
        "average_precision@2": approx(1 / 3),
        "average_precision@10": approx((1 / 1 + 2 / 3) / 3),
        # ideal over all 3 relevant ids (trec_eval), not truncated to |R|
        "ndcg": approx((1 + 1 / L4) / (1 + 1 / L3 + 1 / L4)),
        "ndcg@2": approx(1 / (1 + 1 / L3)),
        "ndcg@10": approx((1 + 1 / L4) / (1 + 1 / L3 + 1 / L4)),
    }


def test_late_first_hit() -> None:
    s, _ = score_query(["x", "y", "a"], ["a"], at=(2,))
    assert s["mrr"] == approx(1 / 3)
    assert s["mrr@2"] == 0.0
    assert s["mrr_granular"] == approx(1 / 3)
    assert s["mrr_granular@2"] == 0.0
    assert s["average_precision"] == approx(1 / 3)
    assert s["ndcg"] == approx(1 / L4)
    assert s["ndcg@2"] == 0.0
    assert s["hit_rate@2"] == 0.0
    assert s["precision"] == approx(1 / 3)


def test_graded_linear_and_exponential() -> None:
    expected = {"a": 3, "b": 1, "c": 0, "d": 2}  # "c" judged non-relevant
    retrieved = ["b", "a", "z", "d", "c"]
    lin, _ = score_query(retrieved, expected, gain="linear", at=(2,))
    exp, _ = score_query(retrieved, expected, gain="exponential", at=(2,))
    assert lin["ndcg"] == approx((1 + 3 / L3 + 2 / L5) / (3 + 2 / L3 + 1 / L4))
    assert exp["ndcg"] == approx((1 + 7 / L3 + 3 / L5) / (7 + 3 / L3 + 1 / L4))
    assert lin["ndcg@2"] == approx((1 + 3 / L3) / (3 + 2 / L3))
    assert exp["ndcg@2"] == approx((1 + 7 / L3) / (7 + 3 / L3))
    # grades <= 0 are not relevant for the binary metrics; grades do not matter there
    for s in (lin, exp):
        assert s["recall"] == 1.0
        assert s["precision"] == approx(3 / 5)
        assert s["average_precision"] == approx((1 / 1 + 2 / 2 + 3 / 4) / 3)
        assert s["mrr"] == 1.0


def test_binary_gains_coincide() -> None:
    r, e = ["x", "a", "y", "b"], {"a": 1, "b": 1, "c": 1}
    assert score_query(r, e, gain="linear") == score_query(r, e, gain="exponential")


def test_negative_grades_are_not_relevant() -> None:
    s, reason = score_query(["a", "b"], {"a": -1, "b": 2}, gain="linear")
    assert reason is None
    assert s["mrr"] == approx(1 / 2)
    assert s["ndcg"] == approx((2 / L3) / 2)


def test_ideal_retrieved_option() -> None:
    # DESIGN's variant: ideal DCG over min(|R|, |E|) positions
    full, _ = score_query(["a"], ["a", "b", "c"])
    short, _ = score_query(["a"], ["a", "b", "c"], ideal="retrieved")
    assert full["ndcg"] == approx(1 / (1 + 1 / L3 + 1 / L4))
    assert short["ndcg"] == 1.0
    # the two coincide once |R| >= |E|
    r = ["x", "a", "b", "c"]
    assert score_query(r, ["a", "b", "c"]) == score_query(r, ["a", "b", "c"], ideal="retrieved")


# --------------------------------------------------------------------------- edge cases


def test_repeated_id_counts_once_at_first_rank() -> None:
    s, _ = score_query(["a", "a", "x", "b", "a"], ["a", "b"])
    # as if the list were ["a", "x", "b"]
    assert s == score_query(["a", "x", "b"], ["a", "b"])[0]
    assert s["hit_rate_granular"] == 1.0  # counting every repeat would give 3/2
    assert s["precision"] == approx(2 / 3)
    assert s["mrr_granular"] == approx((1 + 1 / 3) / 2)
    assert s["average_precision"] == approx((1 + 2 / 3) / 2)


def test_empty_retrieved_scores_zero() -> None:
    s, reason = score_query([], ["a"], at=(3,))
    assert reason is None
    assert set(s.values()) == {0.0}


@pytest.mark.parametrize("expected", [[], {}, {"a": 0}, {"a": -2, "b": 0}])
def test_no_relevant_id_is_unscored(expected: object) -> None:
    s, reason = score_query(["a", "b"], expected, at=(5,))  # type: ignore[arg-type]
    assert reason == NO_RELEVANT_REASON
    assert s == dict.fromkeys(metric_names(RETRIEVAL_METRICS, (5,)))


def test_non_string_ids_are_compared_as_strings() -> None:
    s, _ = score_query([1, 2, 3], ["3", 2])
    assert s["recall"] == 1.0
    assert s["mrr"] == approx(1 / 2)
    s, _ = score_query(["7"], {7: 2})
    assert s["ndcg"] == 1.0


def test_bad_input_types() -> None:
    with pytest.raises(TypeError):
        score_query("abc", ["a"])  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        score_query(["a"], "a")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="number"):
        score_query(["a"], {"a": "high"})  # type: ignore[dict-item]


def test_options_are_checked() -> None:
    with pytest.raises(RetrievalOptionError, match="did you mean 'ndcg'"):
        score_query(["a"], ["a"], metrics=["ndgc"])
    with pytest.raises(ValueError, match="positive"):
        score_query(["a"], ["a"], at=(0,))
    with pytest.raises(ValueError, match="gain"):
        score_query(["a"], ["a"], gain="cubic")
    with pytest.raises(ValueError, match="ideal"):
        score_query(["a"], ["a"], ideal="some")


def test_metric_subset_and_name_order() -> None:
    s, _ = score_query(["a"], ["a"], metrics=["ndcg", "mrr", "ndcg"], at=(3, 1, 3))
    assert list(s) == ["ndcg", "ndcg@3", "ndcg@1", "mrr", "mrr@3", "mrr@1"]


def test_score_texts_normalises() -> None:
    s, reason = score_texts(
        ["  Paris is the CAPITAL\nof France ", "ｆｕｌｌ　ｗｉｄｔｈ", "other"],
        ["paris is the capital of france", "Full Width", "   "],  # blank expected text dropped
    )
    assert reason is None
    assert s["recall"] == 1.0
    assert s["precision"] == approx(2 / 3)
    graded, _ = score_texts(["b", "A"], {"a": 2, "B": 1}, gain="linear")
    assert graded["ndcg"] == approx((1 + 2 / L3) / (2 + 1 / L3))
    assert score_texts(["a"], ["", " "])[1] == NO_RELEVANT_REASON


# --------------------------------------------------------------------------- many queries


def test_evaluate_missing_skipped_and_unjudged_queries() -> None:
    qrels = {"q1": {"a": 1}, "q2": {"b": 1}, "q3": {"c": 0}}
    run = {"q1": ["a"], "q9": ["z"]}
    rep = evaluate_report(qrels, run, metrics=["mrr", "recall"])
    assert rep.per_query == {
        "q1": {"mrr": 1.0, "recall": 1.0},
        "q2": {"mrr": 0.0, "recall": 0.0},  # not in the run: 0, as trec_eval -c
        "q3": {"mrr": None, "recall": None},  # nothing relevant: no score, named
    }
    assert rep.missing == ["q2"]
    assert rep.skipped == ["q3"]
    assert rep.unjudged == ["q9"]
    assert rep.scored == 2
    assert rep.means == {"mrr": 0.5, "recall": 0.5}
    assert mean_scores(rep.per_query) == rep.means
    assert evaluate(qrels, run, metrics=["mrr", "recall"]) == rep.per_query


def test_evaluate_nothing_scored() -> None:
    rep = evaluate_report({"q": {"a": 0}}, {}, metrics=["mrr"])
    assert rep.means == {"mrr": None}
    assert rep.scored == 0
    assert evaluate_report({}, {}).per_query == {}


def test_evaluate_scores_ranked_like_trec_eval() -> None:
    # score descending, then docid descending ("b" before "a"; "d10" before "d1")
    qrels = {"q": {"a": 1}, "r": {"d1": 1}}
    run = {"q": {"a": 1.0, "b": 1.0, "c": 2.0}, "r": {"d1": 0.5, "d10": 0.5}}
    out = evaluate(qrels, run, metrics=["mrr"])
    assert out["q"]["mrr"] == approx(1 / 3)
    assert out["r"]["mrr"] == approx(1 / 2)


def test_scores_compared_as_32_bit_floats_like_trec_eval() -> None:
    qrels = {"q": {"a": 1}}
    # 1e-12 apart: equal as float32, so the larger id ("b") comes first, as in trec_eval
    assert evaluate(qrels, {"q": {"b": 0.1, "a": 0.1 + 1e-12}})["q"]["mrr"] == 0.5
    assert evaluate(qrels, {"q": {"b": 0.1, "a": 0.1 + 1e-6}})["q"]["mrr"] == 1.0
    # beyond the float32 range both become inf and tie
    assert evaluate(qrels, {"q": {"b": 1e300, "a": 1e301}})["q"]["mrr"] == 0.5


def test_evaluate_rejects_nan_scores() -> None:
    with pytest.raises(ValueError, match="NaN"):
        evaluate({"q": {"a": 1}}, {"q": {"a": 1.0, "b": math.nan}})


# --------------------------------------------------------------------------- properties


def naive(
    retrieved: list[str], grades: dict[str, float], k: int | None, gain: str, ideal: str
) -> dict[str, float] | None:
    """Straight from the definitions, one loop per metric."""
    rel = {d for d, g in grades.items() if g > 0}
    if not rel:
        return None
    ranked = list(dict.fromkeys(retrieved))
    top = ranked if k is None else ranked[:k]
    hit_ranks = [i for i, d in enumerate(top, start=1) if d in rel]
    h = len(hit_ranks)

    def g(x: float) -> float:
        return (2**x - 1 if gain == "exponential" else x) if x > 0 else 0.0

    dcg = sum(g(grades.get(d, 0)) / math.log2(i + 1) for i, d in enumerate(top, start=1))
    n_ideal = len(rel) if k is None else min(k, len(rel))
    if ideal == "retrieved":
        n_ideal = min(n_ideal, len(ranked))
    best = sorted((g(x) for x in grades.values() if x > 0), reverse=True)[:n_ideal]
    idcg = sum(x / math.log2(i + 1) for i, x in enumerate(best, start=1))
    return {
        "hit_rate": float(h > 0),
        "hit_rate_granular": h / len(rel),
        "mrr": 1 / hit_ranks[0] if hit_ranks else 0.0,
        "mrr_granular": sum(1 / r for r in hit_ranks) / h if h else 0.0,
        "precision": (h / len(ranked) if ranked else 0.0) if k is None else h / k,
        "recall": h / len(rel),
        "average_precision": sum(j / r for j, r in enumerate(hit_ranks, start=1)) / len(rel),
        "ndcg": dcg / idcg if idcg > 0 else 0.0,
    }


ids = st.sampled_from([f"d{i}" for i in range(12)])
retrieved_lists = st.lists(ids, max_size=15)
grade_maps = st.dictionaries(ids, st.integers(min_value=-1, max_value=4), max_size=10)


@settings(max_examples=300, deadline=None)
@given(
    retrieved_lists,
    grade_maps,
    st.lists(st.integers(1, 20), max_size=3),
    st.sampled_from(["linear", "exponential"]),
    st.sampled_from(["all", "retrieved"]),
)
def test_matches_definitions(
    retrieved: list[str], grades: dict[str, int], at: list[int], gain: str, ideal: str
) -> None:
    scores, reason = score_query(retrieved, grades, at=at, gain=gain, ideal=ideal)
    for k in (None, *at):
        want = naive(retrieved, grades, k, gain, ideal)
        suffix = "" if k is None else f"@{k}"
        if want is None:
            assert reason == NO_RELEVANT_REASON
            assert all(scores[m + suffix] is None for m in RETRIEVAL_METRICS)
        else:
            assert reason is None
            for m, v in want.items():
                assert scores[m + suffix] == pytest.approx(v, abs=1e-12), (m, k)
                assert 0.0 <= scores[m + suffix] <= 1.0  # type: ignore[operator]


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(ids, st.integers(1, 4), min_size=1, max_size=10),
    st.lists(ids, max_size=5),
    st.sampled_from(["linear", "exponential"]),
)
def test_perfect_ranking_scores_one(grades: dict[str, int], tail: list[str], gain: str) -> None:
    ranked = sorted(grades, key=lambda d: -grades[d])  # best grades first
    s, _ = score_query(ranked, grades, gain=gain)
    for m in RETRIEVAL_METRICS:
        if m != "mrr_granular":  # mean of 1/rank over all hits: 1 only with a single hit
            assert s[m] == approx(1.0), m
    # irrelevant ids after every relevant one change only precision
    s2, _ = score_query(ranked + [t for t in tail if t not in grades], grades, gain=gain)
    assert {m: v for m, v in s2.items() if m != "precision"} == pytest.approx(
        {m: v for m, v in s.items() if m != "precision"}
    )


@settings(max_examples=50, deadline=None)
@given(
    st.dictionaries(st.sampled_from("qrstu"), st.tuples(retrieved_lists, grade_maps)),
    st.lists(st.integers(1, 10), max_size=2),
)
def test_evaluate_equals_score_query(
    queries: dict[str, tuple[list[str], dict[str, int]]], at: list[int]
) -> None:
    qrels = {q: g for q, (_, g) in queries.items()}
    run = {q: r for q, (r, _) in queries.items()}
    out = evaluate(qrels, run, at=at)
    for q, (r, g) in queries.items():
        assert out[q] == score_query(r, g, at=at)[0]


# --------------------------------------------------------------------------- vs pytrec_eval

CUTOFFS = (1, 3, 5, 10, 20, 100)
TREC_PAIRS = {
    "map": "average_precision",
    "recip_rank": "mrr",
    "ndcg": "ndcg",
    "set_P": "precision",
    "set_recall": "recall",
    **{f"map_cut_{k}": f"average_precision@{k}" for k in CUTOFFS},
    **{f"ndcg_cut_{k}": f"ndcg@{k}" for k in CUTOFFS},
    **{f"P_{k}": f"precision@{k}" for k in CUTOFFS},
    **{f"recall_{k}": f"recall@{k}" for k in CUTOFFS},
    **{f"success_{k}": f"hit_rate@{k}" for k in CUTOFFS},
}
TREC_MEASURES = {
    "map",
    "recip_rank",
    "ndcg",
    "set_P",
    "set_recall",
    *(f"{m}.{','.join(map(str, CUTOFFS))}" for m in ("map_cut", "ndcg_cut", "P", "recall")),
    f"success.{','.join(map(str, CUTOFFS))}",
}


def generate(
    n: int, graded: bool, seed: int
) -> tuple[dict[str, dict[str, int]], dict[str, dict[str, float]]]:
    """Random qrels and scored runs, with many tied scores and ids like d1/d10/dé."""
    rng = random.Random(seed)
    pool = [f"d{i}" for i in range(80)] + ["dé", "dz", "D1", "d-1"]
    qrels: dict[str, dict[str, int]] = {}
    run: dict[str, dict[str, float]] = {}
    for q in range(n):
        qid = f"q{q}"
        judged = rng.sample(pool, rng.randint(1, 25))
        grades = [rng.choice((0, 1, 2, 3) if graded else (0, 1)) for _ in judged]
        grades[0] = max(grades[0], 1)  # trec_eval scores 0 where we skip: keep one relevant
        qrels[qid] = dict(zip(judged, grades, strict=True))
        if q % 50 == 7:
            continue  # absent from the run
        docs = rng.sample(pool, rng.randint(1, 60))
        # lots of ties, some only as 32-bit floats (trec_eval's precision)
        run[qid] = {d: rng.randint(0, 8) / 4 + rng.choice((0, 0, 1e-9, 1e-6)) for d in docs}
    return qrels, run


@pytest.mark.parametrize("graded", [False, True])
@pytest.mark.parametrize("as_lists", [False, True])
def test_agrees_with_pytrec_eval(graded: bool, as_lists: bool) -> None:
    pytrec_eval = pytest.importorskip("pytrec_eval")
    qrels, run = generate(1000, graded, seed=1 + graded)
    ref = pytrec_eval.RelevanceEvaluator(qrels, TREC_MEASURES).evaluate(run)
    ours_run: dict = run
    if as_lists:  # ranked here in trec_eval order; the list path must give the same
        ours_run = {q: rank(s) for q, s in run.items()}
    ours = evaluate(qrels, ours_run, at=CUTOFFS, gain="linear")
    assert set(ref) == set(run)
    worst = 0.0
    for q, row in ref.items():
        for trec_name, name in TREC_PAIRS.items():
            worst = max(worst, abs(row[trec_name] - ours[q][name]))  # type: ignore[operator]
        assert ours[q]["hit_rate_granular"] == ours[q]["recall"]
    assert worst <= 1e-9
    for q in set(qrels) - set(run):  # trec_eval -c: 0 for every measure
        assert set(ours[q].values()) == {0.0}
