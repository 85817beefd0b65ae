"""citation_recall / citation_precision (metrics/citations.py): the markers read in every form,
ALCE's arithmetic through a judge that decides by a table of what each passage holds, the
requests made (exactly, whatever the answers), the undefined cases as reasons."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest
from localeval.metrics.citations import cited_sentences, marker_numbers, wanted_pairs
from localeval.models.embed import HashEmbedder


@pytest.mark.parametrize(("text", "numbers"), [
    ("Paris [1].", [1]),
    ("Paris [1][2].", [1, 2]),
    ("Paris [1, 2].", [1, 2]),
    ("Paris [1,3] and [2].", [1, 3, 2]),
    ("巴黎【1】。", [1]),
    ("巴黎【1】【2】。", [1, 2]),
    ("巴黎【1，2】。", [1, 2]),
    ("巴黎［2］、[3]。", [2, 3]),
    ("Paris [citation needed] (1) 1.", []),
    ("Paris [sic] [2019] [1, 2019] 【1889】 [1].", [1]),
    ("Paris [999].", [999]),
])
def test_marker_forms(text: str, numbers: list[int]) -> None:
    assert marker_numbers(text) == numbers


def test_a_sentence_owns_the_markers_after_its_end_punctuation() -> None:
    got = cited_sentences("The tower is in Paris. [1] It was built in 1889.[2][3] Thanks!",
                          3, None, "en")
    assert [s.bare for s in got] == ["The tower is in Paris.", "It was built in 1889.",
                                     "Thanks!"]
    assert [s.cites for s in got] == [(1,), (2, 3), ()]
    zh = cited_sentences("铁塔在巴黎。【1】它建于1889年【2，3】。", 3, None, "zh")
    assert [s.bare for s in zh] == ["铁塔在巴黎。", "它建于1889年。"]
    assert [s.cites for s in zh] == [(1,), (2, 3)]


def test_markers_on_their_own_line_go_to_the_sentence_before() -> None:
    got = cited_sentences("The tower is in Paris.\n[1][2]", 2, None, "en")
    assert len(got) == 1 and got[0].cites == (1, 2)


def test_a_marker_past_the_contexts_or_zero_is_out_of_range_and_repeats_count_once() -> None:
    (s,) = cited_sentences("The tower is in Paris [1][1][4][0].", 2, None, "en")
    assert s.cites == (1,) and s.out_of_range == (4, 0) and s.bare == "The tower is in Paris."


def test_a_bracketed_year_is_prose_not_a_citation() -> None:
    # a 4-digit number cannot be a passage index: the bracket stays in the sentence
    (s,) = cited_sentences("The tower opened in [1889] and was repainted [sic] [1].", 2,
                           None, "en")
    assert s.cites == (1,) and s.out_of_range == ()
    assert s.bare == "The tower opened in [1889] and was repainted [sic]."


def test_a_fragment_is_judged_with_its_question() -> None:
    (s,) = cited_sentences("Paris [1].", 1, "Where is the tower?", "en")
    assert s.claim == "Q: Where is the tower? A: Paris."


def test_pairs_asked_whatever_the_answers() -> None:
    got = cited_sentences("A is x [1]. B is y [1][2]. C is z [1][2][3]. D.", 3, None, "en")
    assert wanted_pairs(got) == [
        (0, (1,)),
        (1, (1, 2)), (1, (1,)), (1, (2,)),
        (2, (1, 2, 3)), (2, (1,)), (2, (2, 3)), (2, (2,)), (2, (1, 3)), (2, (3,)), (2, (1, 2))]


# ---- through a judge ---------------------------------------------------------------------------

class TableJudge:
    """A judge that knows which words each passage holds: a statement is supported when every
    word of it in `WORDS` is in the passages it is shown; a sentence states a fact unless it
    says "hope". Gives P(verdict) as a judge would."""

    name = "table"
    fingerprint = "table-judge"

    def __init__(self) -> None:
        self.requests: list[JudgeRequest] = []

    def sampling_key(self) -> str:
        return "table"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        text = request.messages[-1]["content"]
        if request.step == "citations_fact":
            items = numbered(re.split("Sentences:|句子：", text)[-1])
            facts = [int("hope" not in s) for s in items]
            return JudgeReply(text=json.dumps({"facts": [{"fact": f} for f in facts]}),
                              finish_reason="stop",
                              field_probs=[FieldProbs(field="fact", probs={str(f): 0.9,
                                                                          str(1 - f): 0.1})
                                           for f in facts])
        context, statements = re.split("Statements:|陈述：",
                                       re.split("Context:|上下文：", text)[-1])
        items = numbered(statements)
        held = set(re.findall(r"[a-z]+", context.casefold()))
        verdicts = [int(all(w in held for w in re.findall(r"[a-z]+", s.casefold()) if w in WORDS))
                    for s in items]
        return JudgeReply(text=json.dumps({"verdicts": [{"verdict": v} for v in verdicts]}),
                          finish_reason="stop",
                          field_probs=[FieldProbs(field="verdict", probs={str(v): 0.8,
                                                                         str(1 - v): 0.2})
                                       for v in verdicts])

    def close(self) -> None:
        pass


WORDS = {"alpha", "beta", "gamma", "delta"}


def numbered(block: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^\d+\. (.*)$", block, re.MULTILINE)]


CONTEXTS = ["the sky holds alpha.", "the sea holds beta.", "the sky holds alpha and gamma."]


def run(answer: str, contexts: list[str] = CONTEXTS, **row: Any) -> tuple[Any, TableJudge]:
    import localeval

    judge = TableJudge()
    results = localeval.evaluate(
        [{"id": "c", "question": "what is there?", "answer": answer, "contexts": contexts}
         | row], metrics=["citations"], judge=judge, embedder=HashEmbedder(), no_cache=True,
        support_threshold=0.5)
    (rec,) = results.records
    assert not rec.errors, rec.errors
    return rec, judge


def test_every_citation_right() -> None:
    rec, judge = run("There is alpha [1]. There is beta [2]. I hope this helps.")
    assert rec.scores["citation_recall"] == 1.0 and rec.scores["citation_precision"] == 1.0
    assert rec.scores["citation_recall.weighted"] == pytest.approx(0.8)
    rows = rec.details["citation_recall"]["sentences"]
    assert [r["fact"] for r in rows] == [1, 1, 0]
    steps = sorted(r.step for r in judge.requests)
    assert steps == ["citations_fact", "faithfulness_verdicts", "faithfulness_verdicts"]


def test_a_wrong_passage_and_an_uncited_sentence() -> None:
    rec, _ = run("There is alpha [2]. There is beta. There is gamma [3].")
    assert rec.scores["citation_recall"] == pytest.approx(1 / 3)  # gamma: [3] holds it
    assert rec.scores["citation_precision"] == pytest.approx(1 / 2)
    rows = rec.details["citation_recall"]["sentences"]
    assert [r["supported"] for r in rows] == [0, 0, 1]
    assert rows[1]["reason"] == "no citation"
    holds = rec.details["citation_precision"]["citations"]
    assert [(c["sentence"], c["passage"], c["holds"]) for c in holds] == [(1, 2, 0), (3, 3, 1)]


def test_alce_needed_and_unneeded_citations() -> None:
    # alpha and beta: [1] and [2] are each needed; [3] also holds alpha, [1] with it is not
    # needed, nor [3] with [1]; gamma with [1][3]: [3] alone supports it, [1] not needed
    rec, _ = run("There is alpha and beta [1][2]. There is alpha [1][3]. There is gamma [1][3].")
    assert rec.scores["citation_recall"] == 1.0
    holds = {(c["sentence"], c["passage"]): c["holds"]
             for c in rec.details["citation_precision"]["citations"]}
    assert holds == {(1, 1): 1, (1, 2): 1, (2, 1): 1, (2, 3): 1, (3, 1): 0, (3, 3): 1}
    assert rec.scores["citation_precision"] == pytest.approx(5 / 6)
    why = [c["why"] for c in rec.details["citation_precision"]["citations"]]
    assert why[4].startswith("not needed") and why[0].startswith("needed")


def test_a_joint_support_that_fails_fails_every_citation() -> None:
    rec, _ = run("There is alpha and delta [1][2].")
    assert rec.scores["citation_recall"] == 0.0 and rec.scores["citation_precision"] == 0.0


def test_a_marker_past_the_contexts_is_named_and_does_not_hold() -> None:
    rec, _ = run("There is alpha [1][7]. There is beta [9].")
    assert rec.scores["citation_recall"] == pytest.approx(1 / 2)
    assert rec.scores["citation_precision"] == pytest.approx(1 / 3)
    assert rec.details["citation_recall"]["out_of_range"] == [{"sentence": 1, "marker": 7},
                                                              {"sentence": 2, "marker": 9}]
    rows = rec.details["citation_recall"]["sentences"]
    assert rows[1]["reason"] == "every marker is past the contexts"
    past = [c for c in rec.details["citation_precision"]["citations"] if c["passage"] == 7]
    assert past[0]["holds"] == 0 and "past the contexts (1 to 3)" in past[0]["why"]


def test_a_bracketed_year_does_not_lower_precision() -> None:
    rec, _ = run("There is alpha [1]. In [2019] there is beta [2].",
                 contexts=["the sky holds alpha.", "in 2019 the sea held beta."])
    assert rec.scores["citation_precision"] == 1.0
    assert "out_of_range" not in rec.details["citation_recall"]


def test_no_marker_at_all() -> None:
    rec, judge = run("There is alpha. There is beta.")
    assert rec.scores["citation_recall"] == 0.0
    assert rec.details["citation_recall"]["no_citations"].startswith("the answer cites no")
    assert rec.scores["citation_precision"] is None
    assert "cites no passage" in rec.details["citation_precision"]["unscored_reason"]
    assert [r.step for r in judge.requests] == ["citations_fact"]


def test_no_fact_and_citations_only_on_sentences_without_facts() -> None:
    rec, _ = run("I hope this helps.")
    assert rec.scores == {"citation_recall": None, "citation_precision": None}
    assert "states a fact" in rec.details["citation_recall"]["unscored_reason"]
    rec, _ = run("I hope this helps [1].")
    assert rec.scores["citation_precision"] is None
    assert "no sentence that states a fact" in rec.details["citation_precision"][
        "unscored_reason"]


def test_a_cited_empty_context_does_not_hold_and_keeps_the_numbering() -> None:
    rec, _ = run("There is alpha [2]. There is beta [3].", contexts=["x", "", "the sea beta"])
    assert rec.scores["citation_recall"] == pytest.approx(1 / 2)
    rows = rec.details["citation_recall"]["sentences"]
    assert rows[0]["reason"] == "the cited passage is empty"


def test_the_same_bytes_whatever_else_is_in_the_dataset() -> None:
    import localeval

    row = {"id": "a", "question": "q?", "answer": "There is alpha [1][3]. There is beta [2].",
           "contexts": CONTEXTS}
    other = {"id": "b", "question": "q?", "answer": "There is gamma [3].", "contexts": CONTEXTS}
    alone = localeval.evaluate([row], metrics=["citations"], judge=TableJudge(),
                               embedder=HashEmbedder(), no_cache=True,
                               support_threshold=0.5).records[0]
    mixed = localeval.evaluate([other, row, other | {"id": "c"}], metrics=["citations"],
                               judge=TableJudge(), embedder=HashEmbedder(), no_cache=True,
                               parallel=4, support_threshold=0.5).records[1]
    assert alone.scores == mixed.scores and alone.details == mixed.details


def test_zh_uses_the_chinese_templates() -> None:
    rec, judge = run("天空有 alpha【1】。海里有 beta【1】。", question="那里有什么？",
                     contexts=["天空有 alpha。", "海里有 beta。"])
    assert rec.language == "zh"
    assert rec.scores["citation_recall"] == pytest.approx(1 / 2)
    assert any("任务" in r.messages[-1]["content"] for r in judge.requests)


def test_run_only_when_named() -> None:
    from localeval.metrics import resolve

    assert "citation_recall" not in {m.name for m in resolve(None)}
    assert [m.name for m in resolve(["citations"])] == ["citation_recall", "citation_precision"]


def test_the_estimate_counts_the_requests_exactly(tmp_path: Path) -> None:
    from localeval.config import Settings
    from localeval.estimate.sizing import estimate_run
    from localeval.runner import run as run_rows
    from tests.test_estimate import SchemaJudge

    rows = [{"id": "a", "question": "q?", "contexts": CONTEXTS,
             "answer": "There is alpha [1][2][3]. There is beta [2][9]. There is gamma. Bye."},
            {"id": "b", "question": "问？", "contexts": ["天空有 alpha。", "海里有 beta。"],
             "answer": "天空有 alpha【1，2】。海里有 beta。"}]
    answers = tmp_path / "answers.json"
    answers.write_text("[]", encoding="utf-8")
    settings = Settings(judge="fake", fake_answers=answers, metrics=["citations"],
                        no_cache=True)
    estimate = estimate_run(rows, settings, parallel=1, calibrate_now=False)
    real = run_rows(rows, None, settings, judge=SchemaJudge(), embedder=HashEmbedder())
    assert {s: v["requests"] for s, v in estimate["steps"].items()} == \
        real.summary["judge"]["calls_by_step"] == {"citations_fact": 2,
                                                   "faithfulness_verdicts": 11}
    assert estimate["total"]["count"] == "exact"
