"""scripts/bench/bench_frame.py, without a model: its figures on hand-made pairs, its product
variants sending what the rubric metric sends, each edit doing what its name says, and a whole
run on a fake judge (records, resume, the JSON)."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

from localeval.config import Settings
from localeval.data.dataset import Sample
from localeval.judge.client import JudgeClient
from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest
from localeval.metrics.base import MetricContext
from localeval.metrics.rubric import rubric_metric

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench" / "bench_frame.py"


def _load() -> Any:
    spec = importlib.util.spec_from_file_location("bench_frame", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_frame"] = module
    spec.loader.exec_module(module)
    return module


bf = _load()


def _pair(pid: str, good: str, bad: str) -> Any:
    base = {"question": "Q?", "ground_truth": "R."}
    return bf.Pair(pid, Sample(id=f"{pid}/good", answer=good, **base),
                   Sample(id=f"{pid}/bad", answer=bad, **base))


def test_agreement_counts_wins_half_ties_and_unscored_pairs_as_losses() -> None:
    got = bf.agreement([0.9, 0.5, 0.2, None], [0.1, 0.5, 0.8, 0.3])
    assert got["agreement"] == pytest.approx((1 + 0.5 + 0 + 0) / 4)
    assert got["ties"] == 1
    assert got["unscored"] == 1
    assert got["ci95"] is not None and got["ci95"][0] <= got["agreement"] <= got["ci95"][1]


def test_agreement_of_a_score_no_sample_has_is_none_and_prints_a_dash() -> None:
    got = bf.agreement([None, None], [None, None])
    assert got == {"agreement": None, "ci95": None, "ties": 0, "unscored": 4}
    assert bf.variant_table._cell(got, "–") == "–"
    assert bf.variant_table._cell({"agreement": 0.75}, "0.50–0.92") == "0.750 (0.50–0.92)"


def test_length_baseline_both_ways_and_the_sets_direction() -> None:
    pairs = [_pair("p1", "a long good answer", "short"), _pair("p2", "ok", "a long wrong one"),
             _pair("p3", "same", "SAME")]
    longer = bf.length_baseline(pairs, "longer")
    assert longer["longer_wins"] == pytest.approx((1 + 0 + 0.5) / 3)
    assert longer["shorter_wins"] == pytest.approx((0 + 1 + 0.5) / 3)
    assert longer["ties"] == 1
    assert longer["agreement"] == longer["longer_wins"]
    assert bf.length_baseline(pairs, "shorter")["agreement"] == longer["shorter_wins"]


def _records(variant: str, values: dict[str, tuple[float | None, float | None]]) -> list[Any]:
    out = []
    for key, (w, g) in values.items():
        pid, side = key.split("/")
        out.append(bf.Record("s", variant, pid, side, w, g, 100, 40, 3, 0.5))
    return out


def test_figures_use_only_pairs_every_variant_has_and_count_greedy_ties() -> None:
    pairs = [_pair("p1", "x", "y"), _pair("p2", "x", "y"), _pair("p3", "x", "y")]
    records = _records("bare", {"p1/good": (0.9, 1.0), "p1/bad": (0.2, 1.0),
                                "p2/good": (0.3, 0.0), "p2/bad": (0.6, 1.0),
                                "p3/good": (0.7, 1.0), "p3/bad": (0.1, 0.0)})
    records += _records("no_reason", {"p1/good": (0.8, 1.0), "p1/bad": (0.1, 0.0),
                                      "p2/good": (0.5, 1.0), "p2/bad": (0.5, 1.0)})  # no p3
    f = bf.figures(records, pairs, ["bare", "no_reason"], "longer")
    assert f["pair_ids"] == ["p1", "p2"]
    bare = f["variants"]["bare"]
    assert bare["weighted"]["agreement"] == pytest.approx(0.5)  # p1 won, p2 lost
    assert bare["greedy"]["agreement"] == pytest.approx(0.25)  # p1 tied, p2 lost
    assert bare["greedy"]["ties"] == 1
    assert f["variants"]["no_reason"]["weighted"]["ties"] == 1
    assert bare["prompt_tokens_per_request"] == 100 and bare["s_per_sample"] == 0.5
    assert "| bare | 0.500" in bf.markdown({"set": "s", "language": "en", "rubric": "r",
                                            "figures": f})


class Recording:
    """A judge that records each request and answers a fixed verdict with probabilities."""

    name, fingerprint = "recording", "recording"

    def __init__(self) -> None:
        self.requests: list[JudgeRequest] = []

    def sampling_key(self) -> str:
        return "greedy"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        if request.continuations:  # P("1") grows with the answer's length: a known answer
            p1 = min(0.99, len(request.messages[-1]["content"]) / 1000)
            return JudgeReply(text="", finish_reason="stop", prompt_tokens=50,
                              choice_probs={"0": 1 - p1, "1": p1})
        props = json.loads(request.answer_schema)["properties"]
        if "verdict" not in props:  # the reason's request, after the level
            return JudgeReply(text='{"reason": "ok"}', finish_reason="stop", prompt_tokens=90,
                              prompt_tokens_processed=10, completion_tokens=4)
        reason = '"reason": "ok", ' if "reason" in props else ""
        return JudgeReply(text="{" + reason + '"verdict": 1}', finish_reason="stop",
                          prompt_tokens=80, completion_tokens=3 if reason else 0,
                          field_probs=[FieldProbs(field="verdict", probs={"1": 0.7, "0": 0.3})])

    def close(self) -> None:
        pass


@pytest.mark.parametrize(("variant", "explain"), [("default", True), ("no_reason", False),
                                                  ("steps", False)])
def test_product_variants_send_what_the_rubric_metric_sends(variant: str, explain: bool) -> None:
    """The bench's product variants are `run`'s requests byte for byte: the level request
    (prompt-only, the scale's digits) and, with explanations on, the reason's request after it."""
    ds = bf.SETS["halluqa"]()
    v = bf.VARIANTS[variant]
    sample = _pair("p", "这个问题无法回答。", "巴黎。").good
    judge = Recording()
    metric = rubric_metric(bf.asked(ds.rubric, v))
    ctx = MetricContext(sample=sample, language="zh", settings=Settings(explain=explain),
                        judge=JudgeClient(judge), embeddings=None, steps=metric.steps)
    result = asyncio.run(metric.fn(sample, ctx))
    sent = judge.requests
    assert len(sent) == (2 if explain else 1)
    ours = bf.request(ds.rubric, v, sample, "zh", Settings().max_tokens)
    assert ours == sent[0]
    assert ours.continuations == ["0", "1"]
    assert ours.messages[0]["content"] == "Answer with a single digit only."
    reply = asyncio.run(judge.complete(ours))
    assert bf.scores_of(ds.rubric, v, reply) == (
        result.scores["agrees_reference"], result.scores["agrees_reference.greedy"])
    if explain:
        assert bf.reason_request(ds.rubric, ours, reply, "zh", sent[1].max_tokens) == sent[1]
        assert sent[1].messages[:2] == sent[0].messages  # the level's prompt is its prefix
        assert result.details["reason"] == "ok"


def _user(variant: str, lang: str = "zh") -> str:
    ds = bf.SETS["halluqa"]()
    sample = _pair("p", "这个问题无法回答。", "巴黎。").good
    return bf.messages(ds.rubric, bf.VARIANTS[variant], sample, lang)[-1]["content"]


def test_each_edit_changes_what_its_name_says_and_nothing_else() -> None:
    base = _user("json")
    assert base.endswith('输出 {"verdict": 1 或 0}。')
    fence = bf.FENCE_MARK["zh"]
    assert fence in base and fence not in _user("no_reason")  # today's frame has none
    no_fence = _user("json_no_fence")
    assert no_fence == "\n".join(line for line in base.split("\n") if fence not in line)
    level_0 = "回答与参考答案矛盾或不符"
    assert level_0 in base and level_0 not in _user("json_no_levels")
    assert level_0 not in _user("no_reason")  # today's frame: no level lines for yes/no
    shown = _user("levels_yes_no")
    assert shown.index(level_0) < shown.index("question: ")
    last = _user("levels_last")
    assert last.index("reference: ") < last.index(level_0) < last.index("Reply 1 for yes")
    assert "Criterion:" in _user("json_en_frame") and "The answer agrees" in _user("en_frame")
    assert "评估步骤" in _user("json_steps") and "评估步骤" not in base
    assert "Evaluation steps:\n1. 找出参考答案" in _user("steps")
    first = _user("criterion_first")
    assert first.index("标准：") < first.index("问题：") < first.index("输出")
    assert sorted(first.replace(bf.CRITERION_FIRST_TASK["zh"], "")) == sorted(
        base.replace(base.split("\n")[0], ""))  # the same text, moved, but the task line
    token = _user("token")
    assert token.endswith("只输出一个数字：符合标准输出 1，不符合输出 0。")
    assert "verdict\":" not in token
    after = _user("level_first")
    assert after.endswith('输出 {"verdict": 1 或 0, "reason": "一句简短的话"}。')
    ds = bf.SETS["halluqa"]()
    sample = _pair("p", "A。", "B。").good
    bare = bf.messages(ds.rubric, bf.VARIANTS["bare"], sample, "zh")
    assert bare[0]["content"] == "Answer with a single digit only."
    assert bare[1]["content"].split("\n")[2:] == [
        "question: Q?", "answer: A。", "reference: R.", "", "Reply 1 for yes, 0 for no."]
    for lang in ("zh", "en"):  # today's frame of a yes/no rubric without steps: the bare prompt
        assert bf.messages(ds.rubric, bf.VARIANTS["no_reason"], sample, lang) == (
            bf.messages(ds.rubric, bf.VARIANTS["bare"], sample, lang))
    scale = bf.SETS["ragchecker_correctness"]().rubric  # a scale's level lines are shown
    assert "\n5: nothing contradicts the reference\n" in bf.messages(
        scale, bf.VARIANTS["no_reason"], sample, "en")[1]["content"]
    schema = bf.schema(ds.rubric, bf.VARIANTS["level_first"])
    assert list(schema.model_fields) == ["verdict", "reason"]
    start, end = _user("no_reason"), _user("criterion_last")
    criterion = bf.SETS["halluqa"]().rubric.criteria["zh"]
    assert start.index(criterion) < start.index("question: ")
    assert end.index("reference: ") < end.index(criterion) < end.index("Reply 1 for yes")
    assert sorted(start) == sorted(end)  # the same text, moved
    assert "{#" not in end and "#}" not in end


def test_a_fault_set_is_its_twin_with_the_sides_swapped(monkeypatch: pytest.MonkeyPatch) -> None:
    pairs = [_pair("p1", "right", "wrong")]
    twin = bf.swapped(lambda src, train: pairs)(None, False)
    assert (twin[0].good.answer, twin[0].bad.answer) == ("wrong", "right")
    assert twin[0].good.id.endswith("/good") and twin[0].bad.id.endswith("/bad")
    for name, of in (("halluqa_fault", "halluqa"), ("halueval_qa_fault", "halueval_qa")):
        fault, base = bf.SETS[name](), bf.SETS[of]()
        assert fault.rubric.higher_is_better is False and fault.language == base.language
        assert fault.length_trap != base.length_trap


def test_a_run_on_a_fake_judge_writes_records_resumes_and_prints_the_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pairs = [_pair("p1", "a long good answer " * 5, "short"), _pair("p2", "ok", "wrong " * 20)]
    monkeypatch.setitem(bf.SETS, "tiny", lambda: bf.DevSet(
        "zh", bf.AGREES_REFERENCE, "hand-made", lambda src, train: pairs))
    judges: list[Recording] = []
    monkeypatch.setattr(bf, "make_judge", lambda profile, n_ctx: judges.append(Recording())
                        or judges[-1])
    argv = ["--set", "tiny", "--variants", "bare,json,default", "--out", str(tmp_path)]
    assert bf.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    steps = [r.step for r in judges[0].requests]
    assert len(steps) == 16 and steps.count("rubric_reason") == 4  # default: level, then reason
    f = summary["figures"]
    assert f["pairs"] == 2
    # bare: P(1) follows the prompt's length, so the longer answer wins: p1 won, p2 lost
    assert f["variants"]["bare"]["weighted"]["agreement"] == pytest.approx(0.5)
    assert f["variants"]["json"]["greedy"]["ties"] == 2  # always verdict 1
    default = f["variants"]["default"]  # both requests' tokens, one record per row
    assert default["generated_tokens_per_request"] == 4
    assert default["prompt_tokens_per_request"] == 50 + 90
    assert f["length"]["agreement"] == pytest.approx(0.5)
    assert bf.main(argv) == 0  # everything is in the records: nothing asked again
    assert judges[1].requests == []
    assert json.loads(capsys.readouterr().out)["figures"] == f


def test_unknown_variant_is_one_line_and_exit_2(tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    assert bf.main(["--set", "halluqa", "--variants", "bare,nope", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("--variants: unknown nope")
