"""Every metric through the fake judge, with hand-computed expected scores and edge cases."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import numpy as np
import pytest

from localeval.config import Settings
from localeval.data.dataset import to_sample
from localeval.errors import PromptTooLong
from localeval.executor import evaluate_sample
from localeval.judge.client import JudgeClient
from localeval.judge.fake import FakeJudge
from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest
from localeval.metrics import REGISTRY, resolve
from localeval.metrics.answer_correctness import correctness_scores
from localeval.metrics.claims.evidence import pack
from localeval.metrics.context_entities import entity_key, matches
from localeval.metrics.context_precision import average_precision
from localeval.models.backends import Backends
from localeval.models.embed import EmbeddingStore, HashEmbedder
from localeval.results import SampleRecord

EN = {
    "id": "s1",
    "question": "Who founded the company and when?",
    "answer": "Ada founded it in 1990. It is based in Paris. It makes tea.",
    "contexts": ["Ada founded Acme in 1990. Acme is in Paris.", "Acme sells coffee."],
    "ground_truth": "Ada founded Acme in 1990. Acme is based in Paris. Acme sells coffee and tea.",
}


def V(*bits: int, reason: bool = True) -> dict:
    """A bare (or reasoned) verdict-list answer."""
    return {
        "verdicts": [
            ({"reason": "because", "verdict": b} if reason else {"verdict": b}) for b in bits
        ]
    }


def E(*pairs: tuple[str, int]) -> dict:
    """An evidence-first verdict-list answer: (evidence copied from the material, verdict)."""
    return {"verdicts": [{"evidence": e, "verdict": v} for e, v in pairs]}


def S(*per_sentence: list[str]) -> dict:
    """A statements answer: one list of statements per numbered sentence."""
    return {"statements": [list(p) for p in per_sentence]}


def run(
    names: str | list[str], row: dict, answers: Any, judge: FakeJudge | None = None, **settings: Any
) -> tuple[SampleRecord, FakeJudge]:
    judge = judge or FakeJudge(answers)
    backends = Backends(judge=JudgeClient(judge), embeddings=EmbeddingStore(HashEmbedder()))
    metrics = resolve([names] if isinstance(names, str) else names)
    record = asyncio.run(
        evaluate_sample(to_sample(row, 1), metrics,
                        Settings(judge="fake", **settings),
                        backends)
    )
    return record, judge


def cos(a: str, b: str) -> float:
    va, vb = HashEmbedder().encode([a, b])
    return float(np.dot(va, vb))


# ---- faithfulness -----------------------------------------------------------------------------


def test_faithfulness_counts_supported_statements() -> None:
    rec, judge = run(
        "faithfulness",
        EN,
        {
            "faithfulness_statements": [
                S(["Ada founded Acme in 1990."], ["Acme is based in Paris."], ["Acme makes tea."])
            ],
            "faithfulness_verdicts": [
                V(1, 1, 0, reason=False)
            ],
        },
        claims="statements",
    )
    assert rec.scores["faithfulness"] == pytest.approx(2 / 3)
    details = rec.details["faithfulness"]["statements"]
    assert [d["verdict"] for d in details] == [1, 1, 0]
    assert details[2]["statement"] == "Acme makes tea." and details[2]["reason"] == (
        "the judge found no support in the context")
    assert [d["sentence"] for d in details] == [1, 2, 3]
    verdict_prompt = judge.requests[1].messages[1]["content"]
    assert (
        "[1] Ada founded Acme in 1990." in verdict_prompt
        and "[2] Acme sells coffee." in verdict_prompt
    )
    assert "3. Acme makes tea." in verdict_prompt  # numbered, referred to by position
    assert verdict_prompt.index("Task:") < verdict_prompt.index("Context:")  # shared first
    assert verdict_prompt.index("Context:") < verdict_prompt.index("Statements:")
    assert rec.language == "en"


def test_faithfulness_answer_without_sentences_is_unscored() -> None:
    rec, judge = run("faithfulness", {**EN, "answer": "- \n* "}, {})
    assert rec.scores == {"faithfulness": None} and not judge.requests
    assert "no sentence" in rec.details["faithfulness"]["unscored_reason"]


def test_faithfulness_empty_contexts_unscored_and_missing_skipped() -> None:
    rec, judge = run("faithfulness", {**EN, "contexts": ["", "  "]}, {})
    assert rec.scores == {"faithfulness": None} and not judge.requests
    rec, _ = run("faithfulness", {**EN, "contexts": []}, {})
    assert "faithfulness" in rec.skipped and not rec.scores


def test_faithfulness_wrong_verdict_count_is_an_error() -> None:
    rec, _ = run(
        "faithfulness",
        EN,
        {"faithfulness_statements": [S(["a"], ["b"], ["c"])], "faithfulness_verdicts": [V(1)]},
    )
    assert "faithfulness" in rec.errors and "faithfulness" not in rec.scores


def test_default_verdicts_are_bare_with_mechanical_explanations() -> None:
    rec, judge = run(
        "faithfulness",
        EN | {"answer": "Ada founded the company Acme in 1985. Acme is based in the city of "
                        "Paris. Acme also makes tea."},
        {"faithfulness_verdicts": [V(1, 1, 0, reason=False)]},
    )
    assert rec.scores["faithfulness"] == pytest.approx(1 / 3)
    assert [r.step for r in judge.requests] == ["faithfulness_verdicts"]  # nothing generated
    schema = judge.requests[0].answer_schema
    assert "reason" not in schema and "evidence" not in schema
    assert "1. Ada founded the company Acme in 1985.\n2. Acme is based in the city of Paris." \
        in judge.requests[0].messages[1]["content"]
    first, second, third = rec.details["faithfulness"]["statements"]
    assert first["judge_verdict"] == 1 and first["verdict"] == 0
    assert first["reason"] == "not in the context: 1985"
    assert first["closest_sentence"] == "Ada founded Acme in 1990."
    assert second["verdict"] == 1 and second["reason"] == "the judge found it in the context"
    # a short sentence is judged as the answer to the question
    assert third["statement"] == "Q: Who founded the company and when? A: Acme also makes tea."
    assert third["verdict"] == 0 and third["reason"] == "the judge found no support in the context"


# answer_relevance and context_relevance: tests/test_relevance.py


# ---- context_precision ------------------------------------------------------------------------


def test_context_precision_share_and_average_precision() -> None:
    row = {
        **EN,
        "contexts": ["Acme sells coffee.", "Ada founded Acme in 1990.", "Acme is in Paris."],
    }
    rec, judge = run(
        "context_precision",
        row,
        {
            "context_precision_useful": [
                {"verdict": 0}, {"verdict": 1}, {"verdict": 1},
            ]
        },
    )
    assert rec.scores["context_precision"] == pytest.approx(2 / 3)
    assert rec.scores["context_precision.average_precision"] == pytest.approx((1 / 2 + 2 / 3) / 2)
    first = rec.details["context_precision"]["contexts"][0]
    assert first["verdict"] == 0 and first["reason"] == "the judge found no support in the document"
    assert len(judge.requests) == 3  # one per context, question and ground truth first
    p = judge.requests[0].messages[1]["content"]
    assert p.index("Task:") < p.index("Reference answer") < p.index("Acme sells coffee.")


def _useful(p: float) -> dict:
    return {"verdict": int(p >= 0.5), "_probs": [["verdict", {"1": p, "0": 1 - p}]]}


@pytest.mark.parametrize(("row", "below", "above"), [
    # en: step τ 0.25, support τ 0.6; zh: step τ 0.15, support τ 0.45
    ({**EN, "contexts": ["Ada founded Acme in 1990.", "Acme sells coffee."]}, 0.2, 0.3),
    ({"id": "zh", "question": "谁创立了这家公司？", "answer": "艾达在1990年创立了它。",
      "contexts": ["艾达于1990年创立了Acme公司。", "Acme卖咖啡。"],
      "ground_truth": "艾达在1990年创立了Acme。"}, 0.1, 0.2),
])
def test_context_precision_decides_useful_by_its_own_fitted_tau(row: dict, below: float,
                                                                 above: float) -> None:
    """P(useful) is not P(supported): the passage that holds the answer gets P 0.2–0.8 from the
    1.5B, so the support τ (0.6 / 0.45) called two in three of them not useful."""
    from localeval.metrics.claims.verdicts import FITTED, FITTED_STEP

    tau = FITTED_STEP["context_precision_useful"]
    lang = "zh" if row["id"] == "zh" else "en"
    assert below < tau[lang] <= above < FITTED[lang]
    answers = {"context_precision_useful": [_useful(above), _useful(below)]}
    rec, _ = run("context_precision", row, answers)
    assert rec.scores["context_precision"] == 0.5
    assert [c["verdict"] for c in rec.details["context_precision"]["contexts"]] == [1, 0]
    assert rec.scores["context_precision.weighted"] == pytest.approx((above + below) / 2)
    # a τ the user sets decides this step too
    rec, _ = run("context_precision", row, {"context_precision_useful": [
        _useful(above), _useful(below)]}, support_threshold=above + 0.01)
    assert rec.scores["context_precision"] == 0.0


def test_the_run_records_the_step_tau_it_applied(tmp_path) -> None:
    """A change of context_precision's τ changes its scores: it is in the run's fingerprint
    (resume refuses a folder scored with another) and in summary.json, only where it applies."""
    from localeval.metrics.claims.verdicts import FITTED_STEP
    from localeval.runner import run as run_folder

    def one(out: str, metrics: list[str], **settings: Any) -> tuple[dict, dict]:
        answers = {"context_precision_useful": [_useful(0.3)] * 2,
                   "faithfulness_verdicts": [{"verdicts": [{"verdict": 1}] * 3}]}
        run_folder([EN], tmp_path / out, Settings(judge="fake", no_cache=True, metrics=metrics,
                                                  **settings),
                   judge=FakeJudge(answers), embedder=HashEmbedder())
        return (json.loads((tmp_path / out / "run.json").read_text())["inputs"],
                json.loads((tmp_path / out / "summary.json").read_text()))

    inputs, summary = one("cp", ["context_precision"])
    want = {"context_precision_useful": FITTED_STEP["context_precision_useful"]}
    assert inputs["step_thresholds"] == want and summary["step_thresholds"] == want
    for out, settings in (("f", {"metrics": ["faithfulness"]}),
                          ("set", {"metrics": ["context_precision"], "support_threshold": 0.5})):
        inputs, summary = one(out, **settings)
        assert "step_thresholds" not in inputs and "step_thresholds" not in summary
    from localeval.errors import UsageError  # a folder scored at another τ is not resumed

    with pytest.raises(UsageError, match=r"cannot resume .* other settings \(step_thresholds"):
        run_folder([EN], tmp_path / "set", Settings(judge="fake", no_cache=True,
                                                    metrics=["context_precision"]),
                   judge=FakeJudge({}), embedder=HashEmbedder(), resume=True)


def test_average_precision_edges() -> None:
    assert average_precision([1, 1, 0]) == 1.0
    assert average_precision([0, 0, 1]) == pytest.approx(1 / 3)
    assert average_precision([0, 0]) == 0.0


# ---- context_recall ---------------------------------------------------------------------------


def test_context_recall_share_of_ground_truth_statements() -> None:
    rec, judge = run(
        "context_recall",
        EN,
        {
            "faithfulness_statements": [
                S(["Ada founded Acme in 1990."], ["Acme is in Paris."], ["Acme sells tea."])
            ],
            "context_recall_verdicts": [V(1, 1, 0, reason=False)],
        },
        claims="statements",
    )
    assert rec.scores["context_recall"] == pytest.approx(2 / 3)
    details = rec.details["context_recall"]["statements"]
    assert [s["sentence"] for s in details] == [1, 2, 3]
    # a statement that leaves out part of its sentence is replaced by the sentence
    assert details[2]["statement"] == "Acme sells coffee and tea." and details[2]["verdict"] == 0
    assert details[2]["extracted"] == "Acme sells tea."
    assert details[1]["statement"] == "Acme is based in Paris."  # "based" left out
    assert "1. Ada founded Acme in 1990.\n2. Acme is based in Paris." in (
        judge.requests[0].messages[1]["content"])


def test_context_recall_empty_ground_truth_statements_unscored() -> None:
    rec, judge = run("context_recall", {**EN, "ground_truth": "* \n- "}, {})
    assert rec.scores == {"context_recall": None} and not judge.requests
    rec, _ = run("context_recall", {**EN, "ground_truth": "  "}, {})
    assert "context_recall" in rec.skipped


# ---- context_entities_recall ------------------------------------------------------------------


def test_entity_key_normalises_width_case_and_spaces() -> None:
    assert entity_key("ＩＢＭ") == entity_key("ibm") == "ibm"
    assert entity_key(" New  York ") == entity_key("new york") == "newyork"
    assert entity_key("“美国 最高法院”") == "美国最高法院"
    assert entity_key("２０２２年") == "2022年"


def test_entity_matching_by_containment_needs_long_keys() -> None:
    assert matches("最高法院", {"美国最高法院"}) == "美国最高法院"
    assert matches("美国", {"美国最高法院"}) == "美国最高法院"  # 2 CJK characters suffice
    assert matches("us", {"usa"}) is None  # too short to match by containment


def test_context_entities_recall() -> None:
    row = {**EN, "contexts": ["c one", "c two"]}
    rec, _ = run(
        "context_entities_recall",
        row,
        {
            "context_entities_recall_entities": [
                {"entities": ["ＩＢＭ", "New  York", "美国最高法院", "2022年"]},  # ground truth
                {"entities": ["ibm", "new york"]},  # context 1
                {"entities": ["最高法院", "Paris"]},
            ]
        },
    )  # context 2
    assert rec.scores["context_entities_recall"] == 0.75
    assert rec.details["context_entities_recall"]["missing"] == ["2022年"]


def test_context_entities_recall_no_truth_entities_unscored() -> None:
    rec, _ = run(
        "context_entities_recall", EN, {"context_entities_recall_entities": [{"entities": []}]}
    )
    assert rec.scores == {"context_entities_recall": None}


# ---- answer_correctness -----------------------------------------------------------------------

AC_ANSWERS = {
    "faithfulness_statements": [
        S(["sa"], ["sb"], ["sc"]),  # the answer's three sentences
        S(["ga"], ["gb"], ["gc"]),  # the ground truth's three
    ],
    "answer_correctness_answer": [V(1, 1, 0, reason=False)],  # TP=2, FP=1
    "answer_correctness_reference": [V(1, 0, 1, reason=False)],  # FN=1
}


def test_answer_correctness_tp_fp_fn() -> None:
    rec, _ = run("answer_correctness", EN, AC_ANSWERS, claims="statements")
    s = rec.scores
    assert s["answer_correctness"] == pytest.approx(2 / (2 + 0.5 * 2))
    assert s["answer_correctness.precision"] == pytest.approx(2 / 3)
    assert s["answer_correctness.recall"] == pytest.approx(2 / 3)
    assert s["answer_correctness.f1"] == pytest.approx(2 / 3)
    d = rec.details["answer_correctness"]
    assert d["tp"] == ["sa", "sb"] and d["fp"] == ["sc"] and d["fn"] == ["gb"]
    assert d["ground_truth_statements"][1]["reason"] == "the judge found no support in the answer"


def test_answer_correctness_blend_with_similarity() -> None:
    rec, _ = run("answer_correctness", EN, AC_ANSWERS, correctness_weights=(0.75, 0.25),
                 claims="statements")
    sim = max(0.0, cos(EN["answer"], EN["ground_truth"]))
    assert rec.scores["answer_correctness"] == pytest.approx(
        0.75 * (2 / 3) + 0.25 * sim, abs=1e-6
    )
    assert rec.scores["answer_correctness.factual"] == pytest.approx(2 / 3)


def test_answer_correctness_edges() -> None:
    rec, _ = run("answer_correctness", {**EN, "answer": "- ", "ground_truth": "* "}, {})
    assert rec.scores == {"answer_correctness": None}
    rec, _ = run(
        "answer_correctness",
        {**EN, "answer": "- ", "ground_truth": "Ada founded Acme."},
        {
            "faithfulness_statements": [S(["ga"])],
            "answer_correctness_reference": [V(0, reason=False)],
        },
    )
    assert rec.scores["answer_correctness"] == 0.0
    assert rec.scores["answer_correctness.precision"] is None
    assert rec.scores["answer_correctness.f1"] is None


def test_correctness_scores_formula() -> None:
    assert correctness_scores(0, 0, 0)["factual"] is None
    assert correctness_scores(1, 0, 0) == {
        "factual": 1.0,
        "precision": 1.0,
        "recall": 1.0,
        "f1": 1.0,
    }
    assert correctness_scores(0, 2, 2)["f1"] == 0.0


def test_shared_statements_are_asked_once_per_sample() -> None:
    row = {**EN, "ground_truth": EN["answer"]}
    answers = {
        "faithfulness_statements": [S(["sa"], ["sb"], ["sc"])],
        "faithfulness_verdicts": [V(1, 0, 0, reason=False)],
        "context_recall_verdicts": [V(1, 1, 1, reason=False)],
        "answer_correctness_answer": [V(1, 1, 1, reason=False)],
        "answer_correctness_reference": [V(1, 1, 1, reason=False)],
    }
    rec, judge = run(["faithfulness", "context_recall", "answer_correctness"], row, answers,
                     claims="statements")
    assert not rec.errors
    assert [r.step for r in judge.requests].count("faithfulness_statements") == 1
    assert rec.scores["faithfulness"] == pytest.approx(1 / 3)
    assert rec.scores["answer_correctness"] == 1.0


# ---- answer_similarity, rerank_relevancy ------------------------------------------------------


def test_answer_similarity_cosine_and_threshold() -> None:
    rec, _ = run("answer_similarity", EN, {})
    c = cos(EN["answer"], EN["ground_truth"])
    assert rec.scores["answer_similarity.cosine"] == pytest.approx(c, abs=1e-6)
    score = rec.scores["answer_similarity"]
    rec, _ = run("answer_similarity", EN, {}, similarity_threshold=score + 0.01)
    assert rec.scores["answer_similarity"] == 0.0  # the threshold applies to the main score
    rec, _ = run("answer_similarity", EN, {}, similarity_threshold=score - 0.01)
    assert rec.scores["answer_similarity"] == 1.0


def test_rerank_relevancy_mean_and_max() -> None:
    row = {**EN, "contexts": ["x", "y", "z"]}
    rec, _ = run(
        "rerank_relevancy",
        row,
        {
            "rerank_relevancy_rating": [
                {"reason": "r", "rating": 3},
                {"reason": "r", "rating": 1},
                {"reason": "r", "rating": 0},
            ]
        },
    )
    assert rec.scores["rerank_relevancy"] == pytest.approx((1 + 1 / 3 + 0) / 3)
    assert rec.scores["rerank_relevancy.max"] == 1.0
    assert rec.scores["rerank_relevancy.greedy"] == rec.scores["rerank_relevancy"]
    assert rec.scores["rerank_relevancy.max.greedy"] == 1.0
    assert "rerank_relevancy.weighted" not in rec.scores  # the fake judge gives no P


RATING_PROBS = {"3": {"3": 0.6, "2": 0.3, "1": 0.1}, "0": {"0": 0.5, "1": 0.5}}


class RatingProbs(FakeJudge):
    """The fake judge's ratings, with P over the four ratings at the probed `rating` field."""

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        reply = await super().complete(request)
        if "rating" in request.probe_fields:
            said = str(json.loads(reply.text)["rating"])
            reply.field_probs = [FieldProbs(field="rating", probs=RATING_PROBS[said])]
        return reply


def test_rerank_relevancy_weighted_is_the_mean_expected_rating_and_the_ratings_are_probed() -> None:
    answers = {"rerank_relevancy_rating": [{"reason": "r", "rating": 3},
                                           {"reason": "r", "rating": 0}]}
    judge = RatingProbs(answers)
    rec, _ = run("rerank_relevancy", {**EN, "contexts": ["x", "y"]}, None, judge=judge)
    first, second = (0.6 * 3 + 0.3 * 2 + 0.1) / 3, 0.5 / 3
    assert rec.scores["rerank_relevancy"] == pytest.approx(0.5)  # the greedy ratings
    assert rec.scores["rerank_relevancy.weighted"] == pytest.approx((first + second) / 2)
    assert rec.scores["rerank_relevancy.max.weighted"] == pytest.approx(first)
    ctx = rec.details["rerank_relevancy"]["contexts"]
    assert ctx[0]["p_ratings"] == {"0": 0.0, "1": 0.1, "2": 0.3, "3": 0.6}
    assert ctx[1]["weighted"] == pytest.approx(second)


# ---- language ---------------------------------------------------------------------------------

ZH = {
    "id": "zh",
    "question": "谁创立了这家公司？",
    "answer": "艾达在1990年创立了它。",
    "contexts": ["艾达于1990年创立了Acme公司。"],
    "ground_truth": "艾达在1990年创立了Acme。",
}


@pytest.mark.parametrize(
    ("language", "expect", "marker"),
    [("auto", "zh", "上下文"), ("en", "en", "Context:"), ("zh", "zh", "上下文")],
)
def test_language_picks_templates(language: str, expect: str, marker: str) -> None:
    rec, judge = run(
        "faithfulness",
        ZH,
        {"faithfulness_verdicts": [V(1, reason=False)]},
        language=language,
    )
    assert rec.language == expect and rec.scores["faithfulness"] == 1.0
    assert marker in judge.requests[0].messages[1]["content"]


def test_every_metric_has_templates_in_both_languages() -> None:
    from localeval.prompts import PROMPTS_DIR

    for m in REGISTRY.values():
        for step in m.steps:
            for lang in ("zh", "en"):
                assert (PROMPTS_DIR / lang / f"{step}.j2").is_file(), (lang, step)


# ---- contexts longer than the window ----------------------------------------------------------


class TooLongJudge(FakeJudge):
    """Raises PromptTooLong when the prompt has more than `limit` characters (like a window)."""

    def __init__(self, answers: Any, limit: int) -> None:
        super().__init__(answers)
        self.limit = limit
        self.refused = 0

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        size = sum(len(m["content"]) for m in request.messages)
        if size > self.limit:
            self.refused += 1
            raise PromptTooLong(size, self.limit, 0)
        return await super().complete(request)


class CountingJudge(TooLongJudge):
    """Also counts 'tokens' (one per 2 characters) and has a window, as LlamaJudge does."""

    def __init__(self, answers: Any, limit: int, max_tokens: int) -> None:
        super().__init__(answers, limit)
        self.n_ctx = limit // 2
        self.max_tokens = max_tokens

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        return [0] * (sum(len(m["content"]) for m in messages) // 2)

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        n = len(self.prompt_tokens(request.messages))
        if n + request.max_tokens > self.n_ctx:
            self.refused += 1
            raise PromptTooLong(n, self.n_ctx, request.max_tokens)
        return await FakeJudge.complete(self, request)


LONG = [" ".join(f"Fact {i}.{j} is about topic {i}." for j in range(12)) for i in range(3)]
LONG_ROW = {**EN, "answer": "Fact 0.3 is about topic 0. Fact 2.5 is about topic 2.",
            "contexts": LONG}


def _context_text(request: JudgeRequest) -> str:
    content = request.messages[1]["content"]
    return content[content.rindex("Context:") : content.rindex("Statements:")]


def _limit_for_about_one_context() -> int:
    probe = run(
        "faithfulness",
        {**LONG_ROW, "contexts": ["x"]},
        {
            "faithfulness_statements": [S(["s1"], ["s2"])],
            "faithfulness_verdicts": [V(1, 1, reason=False)],
        },
        claims="statements",
    )[1]
    return sum(len(m["content"]) for m in probe.requests[1].messages) + len(LONG[0]) + 40


def test_long_contexts_are_split_and_each_statement_goes_to_the_piece_with_its_evidence() -> None:
    limit = _limit_for_about_one_context()
    judge = TooLongJudge(
        {
            "faithfulness_statements": [S(["Fact 0.3 is about topic 0."],
                                          ["Fact 2.5 is about topic 2."])],
            "faithfulness_verdicts": [V(1, reason=False), V(0, reason=False)],
        },
        limit,
    )
    rec, judge = run("faithfulness", LONG_ROW, None, judge=judge, evidence_passages=False,
                     claims="statements")
    assert not rec.errors, rec.errors
    statements = rec.details["faithfulness"]["statements"]
    verdict_requests = [r for r in judge.requests if r.step == "faithfulness_verdicts"]
    assert len(verdict_requests) == 2  # one per statement: each judged once, in its own piece
    assert all(sum(len(m["content"]) for m in r.messages) <= limit for r in verdict_requests)
    assert "Fact 0.3 is about topic 0" in _context_text(verdict_requests[0])
    assert "Fact 2.5 is about topic 2" in _context_text(verdict_requests[1])
    assert statements[0]["verdict"] == 1 and statements[0]["piece"] < statements[1]["piece"]
    assert statements[1]["verdict"] == 0
    assert rec.scores["faithfulness"] == 0.5
    assert rec.details["faithfulness"]["context_pieces"] >= 3


def test_pieces_are_cut_at_sentence_boundaries_and_drop_nothing() -> None:
    from localeval.metrics.claims.evidence import _units
    from localeval.text import sentences_of_all

    zh = "第一句话很长。第二句话也很长！第三句呢？" * 3
    en = "The first sentence. The second one! A third? " * 3
    for text in (zh, en):
        units = _units(sentences_of_all([text]))
        pieces = pack(units, lambda texts: sum(map(len, texts)) <= 30)
        joined = [t for p in pieces for t in p.texts]
        assert len(pieces) > 1 and "".join(joined).replace(" ", "") == text.replace(" ", "")
        for t in joined:
            assert t.rstrip()[-1] in "。！？.!?"  # every piece ends where a sentence ends


def test_token_counting_judge_gets_pieces_that_fit_first_time(
        monkeypatch: pytest.MonkeyPatch) -> None:
    limit = 2 * (900 + 256)
    judge = CountingJudge(
        {"faithfulness_statements": [S(["s"], ["t"])], "faithfulness_verdicts": [V(0)] * 10},
        limit,
        256,
    )
    rec, judge = run("faithfulness", LONG_ROW, None, judge=judge, max_tokens=256,
                     explain=False)
    assert not rec.errors, rec.errors
    assert judge.refused == 1  # only the first, whole-context attempt
    verdict_requests = [r for r in judge.requests if r.step == "faithfulness_verdicts"]
    assert len(verdict_requests) >= 1 and rec.scores["faithfulness"] == 0.0


def test_route_picks_the_piece_sharing_most_with_the_item() -> None:
    from localeval.metrics.claims.evidence import Piece, route

    pieces = [Piece(["上海男排主场3：1力克山东男排。"], [0]), Piece(["北京队获得亚军。"], [0])]
    assert route(["上海男排击败山东男排", "北京队是亚军", "无关"], pieces) == [0, 1, 0]


def test_one_sentence_longer_than_the_window_is_cut_not_dropped() -> None:
    blob = "x" * 3000  # no sentence boundary at all
    units = [(0, blob)]
    pieces = pack(units, lambda texts: sum(map(len, texts)) <= 700)
    assert len(pieces) > 1 and "".join(t for p in pieces for t in p.texts) == blob


def test_prompt_too_long_without_material_is_an_error() -> None:
    judge = TooLongJudge({"faithfulness_statements": [{"statements": ["s" * 2000]}]}, 1500)
    rec, _ = run("faithfulness", EN, None, judge=judge, claims="statements")
    assert "does not fit" in rec.errors["faithfulness"]


def test_per_context_metric_splits_a_long_context_and_takes_the_best_piece() -> None:
    probe = run(
        "rerank_relevancy",
        {**EN, "contexts": ["x"]},
        {"rerank_relevancy_rating": [{"reason": "r", "rating": 0}]},
    )[1]
    limit = sum(len(m["content"]) for m in probe.requests[0].messages) + len(LONG[0]) + 40
    ratings = [{"reason": "r", "rating": r} for r in (1, 3, 0, 0, 0, 0, 0, 0)]
    judge = TooLongJudge({"rerank_relevancy_rating": ratings}, limit)
    rec, judge = run(
        "rerank_relevancy", {**EN, "contexts": [LONG[0] + " " + LONG[1]]}, None, judge=judge
    )
    assert not rec.errors, rec.errors
    assert rec.scores["rerank_relevancy"] == 1.0  # the best piece's rating
    pieces = rec.details["rerank_relevancy"]["contexts"][0]["pieces"]
    assert pieces == len(judge.requests) >= 2


def test_statements_per_sentence_are_bounded_by_its_length() -> None:
    from localeval.metrics.claims.split import chars_for, per_sentence

    assert per_sentence("Channel 4") == 1
    assert per_sentence("Scottish, but he grew up in England and moved to Wales later.") == 2
    assert per_sentence("很长的句子" * 40) == 3
    assert chars_for("short") == 60 and chars_for("x" * 40, "q" * 20) == 90
    assert chars_for("x" * 500) == 240
    rec, judge = run("faithfulness", {**EN, "answer": "Channel 4"}, {
        "faithfulness_statements": [S(["Misfits airs on Channel 4.", "Extra."])]},
        claims="statements")
    schema = json.loads(judge.requests[0].answer_schema)["properties"]["statements"]
    assert schema["items"]["maxItems"] == 1
    assert "faithfulness" in rec.errors  # two statements for a two-word sentence: refused


def test_placeholder_statements_without_words_are_dropped() -> None:
    rec, _ = run("faithfulness", EN, {
        "faithfulness_statements": [S(["……"], ["Acme is based in Paris."], ["..."])],
        "faithfulness_verdicts": [V(1, 0, 0, reason=False)]}, claims="statements")
    assert [s["statement"] for s in rec.details["faithfulness"]["statements"]] == [
        "Ada founded it in 1990.", "Acme is based in Paris.", "It makes tea."]
    assert rec.scores["faithfulness"] == pytest.approx(1 / 3)
