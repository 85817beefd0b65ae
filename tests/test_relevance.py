"""answer_relevance and context_relevance through the fake judge: each factor, the candidates
rule, the headline, options and undefined cases, with hand-computed expected scores."""

from __future__ import annotations

import asyncio
import itertools
import math
from typing import Any

import pytest

from localeval.config import Settings
from localeval.data.dataset import to_sample
from localeval.executor import evaluate_sample
from localeval.judge.client import JudgeClient
from localeval.judge.fake import FakeJudge
from localeval.metrics import resolve
from localeval.metrics.context_relevance import answer_material, candidates, rank_weight
from localeval.metrics.similarity import rescale
from localeval.models.backends import Backends
from localeval.models.embed import EmbeddingStore, HashEmbedder
from localeval.results import SampleRecord

ROW = {
    "id": "r1",
    "question": "When was Acme founded, and where is it based?",
    "answer": "Acme was founded in 1990. Tea grows in Assam.",
    "contexts": ["Acme was founded in 1990 by Ada. Acme is based in Paris.",
                 "Tea grows in Assam. Coffee is sold in Brazil."],
}


def run(name: str, row: dict, answers: dict[str, list[Any]], **settings: Any
        ) -> tuple[SampleRecord, FakeJudge]:
    judge = FakeJudge(answers)
    backends = Backends(judge=JudgeClient(judge), embeddings=EmbeddingStore(HashEmbedder()))
    record = asyncio.run(evaluate_sample(to_sample(row, 1), resolve([name]),
                                         Settings(judge="fake", **settings), backends))
    return record, judge


def probs(*ps: float) -> list[list[Any]]:
    """The `_probs` of a bare verdict list: P(1) of each verdict."""
    return [["verdict", {"1": p, "0": 1 - p}] for p in ps]


def V(*bits: int, p: tuple[float, ...] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"verdicts": [{"verdict": b} for b in bits]}
    if p is not None:
        out["_probs"] = probs(*p)
    return out


def cosine(a: str, b: str) -> float:
    va, vb = HashEmbedder().encode([a, b])
    return float(va @ vb)


def baseline(question: str) -> float:
    """b_q: the mean cosine of the question and the bundled unrelated English sentences."""
    from localeval.models.baseline_text import SENTENCES

    return sum(cosine(question, s) for s in SENTENCES["en"]) / len(SENTENCES["en"])


Q1, Q2 = "When was Acme founded?", "Where is Acme based?"


def ar_answers(clear: tuple[int, int], parts: list[str], answered: dict[str, Any],
               asked: dict[str, Any], count: int | None = None) -> dict[str, list[Any]]:
    """The judge's answers; `count` (default: one per part) is the number of things asked."""
    return {"answer_relevance_questions": [{"questions": [
                {"question": Q1, "clear": clear[0]}, {"question": "What grows in Assam?",
                                                      "clear": clear[1]}]}],
            "answer_relevance_parts": [{"count": count or min(len(parts), 4), "parts": parts}],
            "answer_relevance_coverage": [answered],
            "answer_relevance_sentences": [asked]}


# ---- answer_relevance -------------------------------------------------------------------------


FOCUS = {"answer_relevance": {"focus": True}}


def test_answer_relevance_is_the_related_share_times_the_mean_part_probability() -> None:
    rec, judge = run("answer_relevance", ROW,
                     ar_answers((1, 1), [Q1, Q2], V(1, 0, p=(0.9, 0.2)), V(1, 0, p=(0.8, 0.3))),
                     answer_relevance_n=2)
    q = ROW["question"]
    b = baseline(q)
    rescaled = [rescale(cosine(q, Q1), b), rescale(cosine(q, "What grows in Assam?"), b)]
    assert rescaled[0] > 0
    related = sum(r > 0 for r in rescaled) / 2
    s = rec.scores
    assert s["answer_relevance.related"] == related
    assert s["answer_relevance.similarity"] == pytest.approx(sum(rescaled) / 2)
    assert s["answer_relevance.completeness"] == 0.5  # one of the two parts given (P ≥ ½)
    # the score multiplies the mean probability, not the ½-cut share; focus is off by default
    assert s["answer_relevance"] == pytest.approx(related * (0.9 + 0.2) / 2)
    assert "answer_relevance.focus" not in s and "answer_relevance.weighted" not in s
    d = rec.details["answer_relevance"]
    assert [p["part"] for p in d["parts"]] == [Q1, Q2]
    assert [p["answered"] for p in d["parts"]] == [1, 0]
    assert d["baseline"] == pytest.approx(b) and d["related"] == related
    assert d["generated_questions"][0]["rescaled"] == pytest.approx(rescaled[0])
    prompts = {r.step: r.messages[1]["content"] for r in judge.requests}
    assert ROW["answer"] not in prompts["answer_relevance_parts"]  # the parts: question only
    assert f"1. {Q1}\n2. {Q2}" in prompts["answer_relevance_coverage"]
    assert "answer_relevance_sentences" not in prompts  # focus off: its request is not sent


def test_a_question_unrelated_to_the_one_asked_does_not_count() -> None:
    far = "Qx zz?"
    q = ROW["question"]
    assert rescale(cosine(q, far), baseline(q)) == 0.0  # no closer than unrelated text
    answers = ar_answers((1, 1), [Q1], V(1, p=(0.8,)), V(1))
    answers["answer_relevance_questions"] = [{"questions": [{"question": Q1, "clear": 1},
                                                            {"question": far, "clear": 1}]}]
    rec, _ = run("answer_relevance", ROW, answers, answer_relevance_n=2)
    assert rec.scores["answer_relevance.related"] == 0.5
    assert rec.scores["answer_relevance"] == pytest.approx(0.5 * 0.8)


def test_the_focus_option_multiplies_the_sentence_probabilities_in() -> None:
    rec, judge = run("answer_relevance", ROW,
                     ar_answers((1, 1), [Q1, Q2], V(1, 0, p=(0.9, 0.2)), V(1, 0, p=(0.8, 0.3))),
                     answer_relevance_n=2, metric_options=FOCUS)
    s = rec.scores
    assert s["answer_relevance.focus"] == 0.5  # the Assam sentence answers nothing asked
    assert s["answer_relevance"] == pytest.approx(
        s["answer_relevance.related"] * (0.9 + 0.2) / 2 * (0.8 + 0.3) / 2)
    d = rec.details["answer_relevance"]
    assert d["sentences"][1] == {"sentence": "Tea grows in Assam.", "asked": 0, "p_asked": 0.3}
    prompts = {r.step: r.messages[1]["content"] for r in judge.requests}
    assert "2. Tea grows in Assam." in prompts["answer_relevance_sentences"]


def test_answer_relevance_the_probability_decides_each_verdict_not_the_written_digit() -> None:
    rec, _ = run("answer_relevance", ROW,
                 ar_answers((1, 1), [Q1, Q2], V(1, 1, p=(0.9, 0.4)), V(1, 1, p=(0.6, 0.45))),
                 answer_relevance_n=2, metric_options=FOCUS)
    assert rec.scores["answer_relevance.completeness"] == 0.5
    assert rec.scores["answer_relevance.focus"] == 0.5
    parts = rec.details["answer_relevance"]["parts"]
    assert parts[1] == {"part": Q2, "answered": 0, "p_answered": 0.4}


def test_without_probabilities_the_written_digits_are_the_factors() -> None:
    rec, _ = run("answer_relevance", ROW, ar_answers((1, 1), [Q1, Q2], V(1, 0), V(1, 0)),
                 answer_relevance_n=2, metric_options=FOCUS)
    s = rec.scores
    assert s["answer_relevance"] == pytest.approx(s["answer_relevance.related"] * 0.5 * 0.5)


def test_an_evasive_answer_scores_zero_whatever_its_parts() -> None:
    rec, _ = run("answer_relevance", ROW,
                 ar_answers((0, 0), [Q1, Q2], V(1, 1), V(1, 1)), answer_relevance_n=2)
    assert rec.scores["answer_relevance"] == 0.0
    assert rec.scores["answer_relevance.related"] == 0.0
    assert rec.scores["answer_relevance.similarity"] == 0.0
    assert rec.scores["answer_relevance.completeness"] == 1.0  # visible as its own sub-score


def test_the_clear_probabilities_break_the_tie_of_answers_whose_flags_are_all_zero() -> None:
    def clear_probs(*ps: float) -> dict[str, Any]:
        return {"questions": [{"question": Q1, "clear": 0},
                              {"question": "What grows in Assam?", "clear": 0}],
                "_probs": [["clear", {"1": p, "0": 1 - p}] for p in ps]}

    q = ROW["question"]
    closer = [rescale(cosine(q, Q1), baseline(q)) > 0,
              rescale(cosine(q, "What grows in Assam?"), baseline(q)) > 0]
    assert closer[0]
    scores = {}
    for name, ps in (("terse", (0.45, 0.4)), ("evasive", (0.1, 0.2))):
        answers = ar_answers((0, 0), [Q1], V(1, p=(0.8,)), V(1))
        answers["answer_relevance_questions"] = [clear_probs(*ps)]
        rec, _ = run("answer_relevance", ROW, answers, answer_relevance_n=2)
        expected = sum(p * c for p, c in zip(ps, closer, strict=True)) / 2
        assert rec.scores["answer_relevance.related"] == pytest.approx(0.1 * expected)
        assert rec.scores["answer_relevance"] == pytest.approx(0.1 * expected * 0.8)
        d = rec.details["answer_relevance"]
        assert d["clear_share"] == 0 and d["expected_clear_share"] == pytest.approx(expected)
        assert [(g["clear"], g["p_clear"]) for g in d["generated_questions"]] == [
            (0, ps[0]), (0, ps[1])]
        scores[name] = rec.scores["answer_relevance"]
    assert scores["terse"] > scores["evasive"] > 0  # no tie at 0 between the two
    assert scores["terse"] < 0.05  # an answer the judge calls unclear stays near 0


def test_a_flag_decides_by_its_probability_and_the_share_outweighs_the_doubt() -> None:
    answers = ar_answers((0, 1), [Q1], V(1, p=(1.0,)), V(1))
    answers["answer_relevance_questions"] = [{
        "questions": [{"question": Q1, "clear": 0}, {"question": Q2, "clear": 1}],
        "_probs": [["clear", {"1": 0.7, "0": 0.3}], ["clear", {"1": 0.2, "0": 0.8}]]}]
    rec, _ = run("answer_relevance", ROW, answers, answer_relevance_n=2)
    d = rec.details["answer_relevance"]
    assert [g["clear"] for g in d["generated_questions"]] == [1, 0]  # P, not the digit
    closer = rescale(cosine(ROW["question"], Q2), baseline(ROW["question"])) > 0
    share = 1 / 2  # Q1: clear by P and closer than unrelated text
    expected = (0.7 + 0.2 * closer) / 2
    assert d["clear_share"] == share
    assert rec.scores["answer_relevance.related"] == pytest.approx(0.9 * share + 0.1 * expected)


def test_repeated_parts_count_once_and_no_usable_part_means_the_whole_question() -> None:
    rec, _ = run("answer_relevance", ROW,
                     ar_answers((1, 1), [Q1, " when was ACME founded? ", "?"], V(1), V(1, 1)),
                     answer_relevance_n=2)
    assert [p["part"] for p in rec.details["answer_relevance"]["parts"]] == [Q1]
    rec, _ = run("answer_relevance", ROW,
                     ar_answers((1, 1), ["...", "—"], V(0), V(1, 1)), answer_relevance_n=2)
    assert [p["part"] for p in rec.details["answer_relevance"]["parts"]] == [ROW["question"]]
    assert rec.scores["answer_relevance.completeness"] == 0.0


def test_parts_written_past_the_count_are_dropped() -> None:
    # the judge says one thing is asked, then lists two: the second is not measured
    rec, judge = run("answer_relevance", ROW,
                     ar_answers((1, 1), [Q1, Q2], V(1), V(1, 1), count=1), answer_relevance_n=2)
    d = rec.details["answer_relevance"]
    assert [p["part"] for p in d["parts"]] == [Q1]
    assert d["parts_count"] == 1 and d["parts_dropped"] == [Q2]
    assert rec.scores["answer_relevance.completeness"] == 1.0
    prompts = {r.step: r.messages[-1]["content"] for r in judge.requests}
    assert Q2 not in prompts["answer_relevance_coverage"]
    # repeats are dropped before the count is applied: two distinct parts asked, both kept
    rec, _ = run("answer_relevance", ROW,
                 ar_answers((1, 1), [Q1, " when was ACME founded? ", Q2], V(1, 0), V(1, 1),
                            count=2), answer_relevance_n=2)
    d = rec.details["answer_relevance"]
    assert [p["part"] for p in d["parts"]] == [Q1, Q2] and d["parts_dropped"] == []
    assert rec.scores["answer_relevance.completeness"] == 0.5
    # a count above the parts written keeps every part written
    rec, _ = run("answer_relevance", ROW, ar_answers((1, 1), [Q1], V(1), V(1, 1), count=3),
                 answer_relevance_n=2)
    assert [p["part"] for p in rec.details["answer_relevance"]["parts"]] == [Q1]


def test_answer_relevance_options_leave_factors_and_their_requests_out() -> None:
    answers = ar_answers((1, 1), [Q1], V(1), V(1, 1))
    del answers["answer_relevance_parts"], answers["answer_relevance_coverage"]
    del answers["answer_relevance_sentences"]
    rec, judge = run("answer_relevance", ROW, answers, answer_relevance_n=2,
                     metric_options={"answer_relevance": {"completeness": False}})
    assert [r.step for r in judge.requests] == ["answer_relevance_questions"]
    s = rec.scores
    assert s["answer_relevance"] == s["answer_relevance.related"]
    assert "answer_relevance.completeness" not in s and "answer_relevance.focus" not in s


def test_long_answers_are_judged_in_groups_of_sixteen_sentences() -> None:
    answer = " ".join(f"Fact {i} is true." for i in range(20))
    rec, judge = run("answer_relevance", {**ROW, "answer": answer},
                     {**ar_answers((1, 1), [Q1], V(1), V(*[1] * 16)),
                      "answer_relevance_sentences": [V(*[1] * 16), V(0, 0, 0, 0)]},
                     answer_relevance_n=2, metric_options=FOCUS)
    assert [r.step for r in judge.requests].count("answer_relevance_sentences") == 2
    assert rec.scores["answer_relevance.focus"] == pytest.approx(16 / 20)


def test_answer_relevance_unscored_cases() -> None:
    rec, judge = run("answer_relevance", {**ROW, "answer": "- \n* "}, {})
    assert rec.scores == {"answer_relevance": None} and not judge.requests
    rec, _ = run("answer_relevance", ROW, {"answer_relevance_questions": [
        {"questions": [{"question": " ", "clear": 1}, {"question": "", "clear": 1}]}]},
        answer_relevance_n=2)
    assert rec.scores == {"answer_relevance": None}
    assert "no usable question" in rec.details["answer_relevance"]["unscored_reason"]


# ---- context_relevance ------------------------------------------------------------------------


def test_candidates_share_a_content_term_with_the_answer() -> None:
    sentences = ["Acme was founded in 1990 by Ada.", "Acme is based in Paris.",
                 "Coffee is sold in Brazil.", "Tea grows in Assam."]
    assert candidates(sentences, ROW["answer"]) == [True, True, False, True]
    assert candidates(["长城全长两万公里。", "北京是首都。"], "长城很长。") == [True, False]


def test_each_answer_sentence_judges_its_k_best_candidates_only() -> None:
    sentences = ["Acme sells tea.", "Acme was founded in 1990 by Ada.", "Acme is old.",
                 "Acme was founded in Paris in 1990.", "Tea grows in Assam.", "Rain fell."]
    answer = "Acme was founded in 1990. Tea grows in Assam."
    assert candidates(sentences, answer) == [True, True, True, True, True, False]
    # "Acme was founded in 1990.": the two sentences sharing the most terms (3 each), not the
    # ones sharing only "Acme"; "Tea grows in Assam.": itself, then "Acme sells tea." (1 term)
    assert candidates(sentences, answer, 2) == [True, True, False, True, True, False]
    assert candidates(sentences, answer, 1) == [False, True, False, False, True, False]
    # a long context: the sentences judged grow with the answer, not with the context
    long = [f"Acme opened shop {i} in a town." for i in range(40)]
    assert sum(candidates(long, "Acme opened a shop.", 3)) == 3


def test_a_fragment_answer_is_shown_with_its_question() -> None:
    assert answer_material("1990.", Q1, "en") == f"Q: {Q1} A: 1990."
    assert answer_material(ROW["answer"], Q1, "en") == ROW["answer"]


BOTH_WAYS = {"context_relevance": {"answer_supported": True}}


def cr_answers(context: dict[str, Any], faith: dict[str, Any]) -> dict[str, list[Any]]:
    return {"context_relevance_context": [context], "faithfulness_verdicts": [faith]}


def test_context_relevance_headline_is_the_mean_probability_over_every_context_sentence() -> None:
    # four context sentences; "Coffee is sold in Brazil." shares nothing with the answer
    rec, judge = run("context_relevance", ROW,
                     cr_answers(V(1, 0, 1, p=(0.9, 0.2, 0.7)), V(1, 0, p=(0.8, 0.1))),
                     claims="sentences", metric_options=BOTH_WAYS)
    s = rec.scores
    assert s["context_relevance"] == s["context_relevance.context_supported_precision.weighted"]
    assert s["context_relevance"] == pytest.approx((0.9 + 0.2 + 0.7 + 0.0) / 4)
    tau = 0.6  # en
    hard = [tau <= 0.9, tau <= 0.2, tau <= 0.7, False]
    assert s["context_relevance.context_supported_precision"] == pytest.approx(sum(hard) / 4)
    w2 = rank_weight(2)
    assert s["context_relevance.rank_weighted"] == pytest.approx((0.5 + w2 * 0.5) / (1 + w2))
    assert s["context_relevance.answer_supported_precision"] == 0.5
    assert s["context_relevance.answer_supported_precision.weighted"] == pytest.approx(0.45)
    d = rec.details["context_relevance"]
    assert d["judged"] == 3
    coffee = d["context_sentences"][3]
    assert coffee["sentence"] == "Coffee is sold in Brazil."
    assert coffee["rule"] == "not a candidate" and coffee["p_supported"] == 0.0
    prompts = {r.step: r.messages[1]["content"] for r in judge.requests}
    assert "Coffee" not in prompts["context_relevance_context"]
    assert "3. Tea grows in Assam." in prompts["context_relevance_context"]


def test_padding_lowers_the_headline_when_the_padded_sentences_share_nothing() -> None:
    answers = cr_answers(V(1, 0, 1, p=(0.9, 0.2, 0.7)), V(1, 0, p=(0.8, 0.1)))
    focused, _ = run("context_relevance", ROW, answers, claims="sentences")
    padded_row = {**ROW, "contexts": [ROW["contexts"][0] + " Rain fell on Oslo.",
                                      ROW["contexts"][1]]}
    answers = cr_answers(V(1, 0, 1, p=(0.9, 0.2, 0.7)), V(1, 0, p=(0.8, 0.1)))
    padded, _judge = run("context_relevance", padded_row, answers, claims="sentences")
    assert padded.scores["context_relevance"] == pytest.approx(1.8 / 5)
    assert focused.scores["context_relevance"] > padded.scores["context_relevance"]


def test_context_relevance_shares_its_answer_direction_with_faithfulness() -> None:
    both = {"context_relevance_context": [V(1, 0, 1, p=(0.9, 0.2, 0.7))],
            "faithfulness_verdicts": [V(1, 0, p=(0.8, 0.1))]}  # one answer for both metrics
    judge = FakeJudge(both)
    backends = Backends(judge=JudgeClient(judge), embeddings=EmbeddingStore(HashEmbedder()))
    rec = asyncio.run(evaluate_sample(to_sample(ROW, 1), resolve(["faithfulness",
                                                                  "context_relevance"]),
                                      Settings(judge="fake", claims="sentences",
                                               metric_options=BOTH_WAYS), backends))
    assert [r.step for r in judge.requests].count("faithfulness_verdicts") == 1
    assert rec.scores["faithfulness"] == rec.scores["context_relevance.answer_supported_precision"]


def test_context_relevance_by_default_asks_only_about_the_context() -> None:
    rec, judge = run("context_relevance", ROW,
                     {"context_relevance_context": [V(1, 0, 1, p=(0.9, 0.2, 0.7))]},
                     claims="sentences")
    assert [r.step for r in judge.requests] == ["context_relevance_context"]
    assert rec.scores["context_relevance"] == pytest.approx((0.9 + 0.2 + 0.7) / 4)
    assert not any("answer_supported" in k for k in rec.scores)


def test_context_relevance_options() -> None:
    rec, judge = run("context_relevance", ROW,
                     {"context_relevance_context": [V(1, 0, 0, 1)]}, claims="sentences",
                     metric_options={"context_relevance": {"narrow": False,
                                                           "answer_supported": False}})
    assert [r.step for r in judge.requests] == ["context_relevance_context"]
    assert "4. Coffee is sold in Brazil." in judge.requests[0].messages[1]["content"]
    s = rec.scores
    # the fake judge gives no probabilities: the headline is then the hard share
    assert s["context_relevance"] == s["context_relevance.context_supported_precision"] == 0.5
    assert "context_relevance.answer_supported_precision" not in s


def test_context_relevance_unscored_cases() -> None:
    rec, judge = run("context_relevance", {**ROW, "answer": "- \n* "}, {})
    assert rec.scores == {"context_relevance": None} and not judge.requests
    rec, judge = run("context_relevance", {**ROW, "contexts": [" ", ""]}, {})
    assert rec.scores == {"context_relevance": None} and not judge.requests


def test_rank_weights_fall_with_rank() -> None:
    weights = [rank_weight(i) for i in range(1, 6)]
    assert weights[0] == 1.0 and all(a > b for a, b in itertools.pairwise(weights))
    assert weights[1] == pytest.approx(1 / math.log2(3))


# ---- the relevance dev sets (scripts/provenance) ------------------------------------------------


def _script(name: str) -> Any:
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[1] / "scripts" / "provenance" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_related_padding_shares_terms_with_the_answer_but_never_holds_it() -> None:
    from localeval.text import overlap_words

    dev = _script("dev_sets")
    pool = [(s, overlap_words(s)) for s in ["Paris hosts the Louvre museum.", "Rain fell on Oslo.",
                                      "The Louvre opened in Paris in 1793.",
                                      "Paris is the capital of France."]]
    got = dev.related(pool, "Which museum is in Paris? The Louvre.", "Louvre", 2)
    # the sentences sharing most terms, leaving out those that hold the answer itself
    assert got == ["Paris is the capital of France."]
    assert dev.related(pool, "Oslo weather", "sun", 1) == ["Rain fell on Oslo."]


def test_relevance_variants_recompute_the_score_from_details() -> None:
    variants = _script("relevance_variants")

    def row(pid: str, related: list[int], p: float) -> dict[str, Any]:
        gen = [{"question": f"q{i}", "clear": 1, "rescaled": 0.3 * r, "cosine": 0.8}
               for i, r in enumerate(related)]
        return {"id": pid, "details": {"answer_relevance": {
            "generated_questions": gen, "similarity": 0.1, "raw": 0.8,
            "parts": [{"part": "x", "answered": int(p >= 0.5), "p_answered": p}]}}}

    rows = {r["id"]: r for r in [row("k/a", [1, 1], 0.9), row("k/b", [1, 0], 0.9),
                                 row("m/a", [1, 1], 0.4), row("m/b", [1, 1], 0.6)]}
    get = variants._ar("related × P completeness (the score)")
    assert get(rows["k/b"]) == pytest.approx(0.5 * 0.9)
    figures = variants.figures(rows, get)
    assert figures["pairwise"] == 0.5 and figures["pairs"] == 2 and figures["ties"] == 0
