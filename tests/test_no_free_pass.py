"""No sentence passes unjudged (issue 29 items 1 and 2): a false claim with a question appended,
or quoted whole from a context that denies it, scores what the same claim scores written
plainly. The fake judge here reads the numbered claims of each verdict request and finds a
claim supported (P 0.9) only when the context states it, so the rules are what is tested."""

from __future__ import annotations

import re
from typing import Any

import pytest

from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest
from localeval.metrics.claims.split import asserts_nothing


class ReadingJudge:
    """Supports a numbered claim (P 0.9) when `supported(claim)`, else P 0.1; counts claims."""

    name = "reading"
    fingerprint = "reading-judge"

    def __init__(self, supported: Any) -> None:
        self.supported = supported
        self.claims: list[str] = []

    def sampling_key(self) -> str:
        return "reading"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        text = request.messages[-1]["content"]
        items = re.findall(r"^\d+\. (.*)$", re.split(r"\n(?:Statements|陈述)[:：]\n", text)[-1],
                           flags=re.MULTILINE)
        self.claims += items
        p = [0.9 if self.supported(c) else 0.1 for c in items]
        return JudgeReply(text='{"verdicts": [' + ", ".join(
            f'{{"verdict": {int(x > 0.5)}}}' for x in p) + "]}", finish_reason="stop",
            field_probs=[FieldProbs(field="verdict", probs={"1": x, "0": 1 - x}) for x in p])

    def close(self) -> None:
        pass


def score(row: dict[str, Any], supported: Any, **settings: Any) -> tuple[Any, ReadingJudge]:
    judge = ReadingJudge(supported)
    from localeval.config import Settings
    from localeval.models.embed import HashEmbedder
    from localeval.runner import run

    outcome = run([row], None, Settings(no_cache=True, metrics=["faithfulness"], **settings),
                  judge=judge, embedder=HashEmbedder())
    (rec,) = outcome.records
    assert not rec.errors, rec.errors
    return rec, judge


EN = {"id": "en", "question": "Who invented the telephone?",
      "contexts": ["Alexander Graham Bell patented the telephone in 1876. Einstein was a "
                   "physicist."]}
EN_TRUE, EN_FALSE = "Einstein was a physicist.", "Einstein invented the telephone in 1876"
ZH = {"id": "zh", "question": "谁发明了电话？",
      "contexts": ["贝尔于1876年获得了电话的专利。爱因斯坦是一位物理学家。"]}
ZH_TRUE, ZH_FALSE = "爱因斯坦是一位物理学家。", "爱因斯坦于1876年发明了电话"


def _en(claim: str) -> bool:
    return "physicist" in claim


def _zh(claim: str) -> bool:
    return "物理学家" in claim


@pytest.mark.parametrize("ending", [", who knew?", " — did you know?", " (surprising?)",
                                    ", did he not?", ", right?", "?", " -- or did he?",
                                    " who knew?"])
def test_a_question_ending_does_not_switch_judging_off_en(ending: str) -> None:
    plain, _ = score(EN | {"answer": f"{EN_TRUE} {EN_FALSE}."}, _en)
    asked, judge = score(EN | {"answer": f"{EN_TRUE} {EN_FALSE}{ending}"}, _en)
    assert plain.scores["faithfulness"] == asked.scores["faithfulness"] == 0.5
    assert any("telephone" in c for c in judge.claims)


@pytest.mark.parametrize("ending", ["，你知道吗？", "吧？", "？", "（意外吗？）", "，对吧？",
                                    "，不是吗？", "，谁知道呢？"])
def test_a_question_ending_does_not_switch_judging_off_zh(ending: str) -> None:
    plain, _ = score(ZH | {"answer": f"{ZH_TRUE}{ZH_FALSE}。"}, _zh)
    asked, judge = score(ZH | {"answer": f"{ZH_TRUE}{ZH_FALSE}{ending}"}, _zh)
    assert plain.scores["faithfulness"] == asked.scores["faithfulness"] == 0.5
    assert any("电话" in c for c in judge.claims)


@pytest.mark.parametrize("sentence", [
    "Einstein invented the telephone in 1876, who knew?", "Did you know Einstein did it?",
    "When did Einstein invent the telephone?", "Who knew that Bell was second?",
    "Einstein invented it in 1876?", "Was it Einstein who invented it?", "How come it rang?",
    "Is it true Einstein invented it?", "爱因斯坦发明了电话？", "1876年发明电话的是哪位科学家？",
    "你知道爱因斯坦发明了电话吗？", "爱因斯坦发明了电话呢？",
    "When did the sun start orbiting the earth?", "爱因斯坦是哪年发明电话的？"])
def test_a_question_that_can_carry_a_claim_is_a_claim(sentence: str) -> None:
    assert not asserts_nothing(sentence)


@pytest.mark.parametrize("sentence", [
    "What is photosynthesis?", "Who was born first?", "Is it red?", "How can I help?",
    "Would you like to know more?", "Did Bell patent the telephone in 1876?", "光合作用是什么？",
    "谁先出生？", "它有多高？", "电话是1876年发明的吗？"])
def test_a_question_by_its_form_alone_may_assert_nothing(sentence: str) -> None:
    assert asserts_nothing(sentence)  # a candidate only: the judge is asked (test_rules_judged)


def test_the_samples_own_question_is_judged_as_any_sentence() -> None:
    assert not asserts_nothing("Did Einstein invent the telephone, as some say?")


QUOTE_EN = "Einstein invented the telephone in 1876 while working at the Bern patent office."
QUOTE_ZH = "爱因斯坦于1876年在伯尔尼专利局工作时发明了电话。"


@pytest.mark.parametrize("frame", [
    "Myth #3. {q}", "Common misconceptions:\n- {q}", "The following claims are false:\n1. {q}",
    "{q} This is false.", "{q} None of that happened."])
def test_a_quote_its_context_denies_is_judged_en(frame: str) -> None:
    context = frame.format(q=QUOTE_EN)
    row = {"id": "q", "question": "Who invented the telephone?", "contexts": [context]}

    def states(claim: str) -> bool:  # the context denies the quote: never supported
        return "physicist" in claim

    quoted, judge = score(row | {"answer": f"{QUOTE_EN} Einstein was a physicist."}, states)
    plain, _ = score(row | {"answer": "Einstein invented the telephone in 1876 at the Bern "
                                      "office. Einstein was a physicist."}, states)
    assert quoted.scores["faithfulness"] == plain.scores["faithfulness"] == 0.5
    first = quoted.details["faithfulness"]["statements"][0]
    assert first["quoted"] is True and first["verdict"] == 0 and first["rule"] == "judge"
    assert QUOTE_EN in judge.claims


@pytest.mark.parametrize("frame", ["误区三。{q}", "常见的误解：\n- {q}",
                                   "以下说法是错误的：\n1. {q}", "{q}这是谣言。"])
def test_a_quote_its_context_denies_is_judged_zh(frame: str) -> None:
    row = {"id": "q", "question": "谁发明了电话？", "contexts": [frame.format(q=QUOTE_ZH)]}
    quoted, judge = score(row | {"answer": QUOTE_ZH}, lambda claim: False)
    assert quoted.scores["faithfulness"] == 0.0
    entry = quoted.details["faithfulness"]["statements"][0]
    assert entry["quoted"] is True and entry["verdict"] == 0
    assert judge.claims == [QUOTE_ZH]


def test_a_quote_is_judged_with_the_statements_too() -> None:
    row = {"id": "q", "question": "Who invented the telephone?",
           "contexts": [f"Myth #3. {QUOTE_EN}"], "answer": QUOTE_EN}
    judge = ReadingJudge(lambda claim: False)
    from localeval.config import Settings
    from localeval.judge.fake import FakeJudge
    from localeval.models.embed import HashEmbedder
    from localeval.runner import run

    class Both(FakeJudge):
        async def complete(self, request: JudgeRequest) -> JudgeReply:
            if request.step == "faithfulness_statements":
                return await super().complete(request)
            return await judge.complete(request)

    outcome = run([row], None, Settings(no_cache=True, claims="statements",
                                        metrics=["faithfulness"]),
                  judge=Both({"faithfulness_statements": [{"statements": [[QUOTE_EN]]}]}),
                  embedder=HashEmbedder())
    (rec,) = outcome.records
    assert rec.scores["faithfulness"] == 0.0 and judge.claims == [QUOTE_EN]
