"""scripts/bench/bench_builtin_frame.py, without a model: its `default` variant sends byte for
byte what `run` sends (short and long contexts, en and zh, two metrics), each edit removes what
its name says and nothing else, and a whole run on a fake judge (records, resume, the JSON)."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import localeval
from localeval import prompts
from localeval.data.dataset import Sample
from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest
from tests.fooled import FooledJudge

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "bench" / "bench_builtin_frame.py"


def _load() -> Any:
    spec = importlib.util.spec_from_file_location("bench_builtin_frame", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_builtin_frame"] = module
    spec.loader.exec_module(module)
    return module


bb = _load()


class Recording(FooledJudge):
    """FooledJudge's answers (every verdict 0), with P(verdict = 1) growing with the prompt's
    length for each verdict written, so that `.weighted` is defined and depends on what is sent."""

    def __init__(self) -> None:
        super().__init__()

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        reply = await super().complete(request)
        n = len(re.findall(r'"verdict"', reply.text))
        p1 = min(0.99, len(request.messages[-1]["content"]) / 4000)
        probs = [FieldProbs(field="verdict", probs={"1": p1, "0": 1 - p1}) for _ in range(n)]
        words = sum(len(m["content"].split()) for m in request.messages)
        return reply.model_copy(update={"field_probs": probs if request.probe_fields else [],
                                        "prompt_tokens": words, "prompt_tokens_processed": words})


LONG_EN = "Dundee harbour notes were compiled by the town clerk. " + " ".join(
    f"Paragraph {i}: the harbour ferry number {i} leaves at {i} o'clock from pier {i % 7} and "
    f"carries about {i * 10} passengers on a summer day." for i in range(40)) + (
    " The Tay Bridge opened in 1878. Thomas Bouch designed the Tay Bridge.")
ROWS = {
    "en": {"id": "en", "question": "When did the Tay Bridge open?",
           "answer": "The Tay Bridge opened in 1878. It was designed by Thomas Bouch.",
           "contexts": ["The Tay Bridge opened in 1878; Thomas Bouch designed it."],
           "ground_truth": "It opened in 1878."},
    "zh": {"id": "zh", "question": "泰桥是哪一年通车的？",
           "answer": "泰桥于1878年通车。它由托马斯·鲍奇设计。",
           "contexts": ["泰桥于1878年通车，由托马斯·鲍奇设计。"], "ground_truth": "1878年。"},
    "long": {"id": "long", "question": "When did the Tay Bridge open?",
             "answer": "The Tay Bridge opened in 1878. Thomas Bouch designed the Tay Bridge.",
             "contexts": [LONG_EN]},
}


def _set(metric: str, language: str) -> Any:
    return bb.DevSet(metric, language, "hand-made", lambda src: [])


@pytest.mark.parametrize(("metric", "row"), [
    ("faithfulness", "en"), ("faithfulness", "zh"), ("faithfulness", "long"),
    ("answer_correctness", "en"), ("answer_correctness", "zh")])
def test_default_sends_byte_for_byte_what_run_sends(metric: str, row: str) -> None:
    data = {k: v for k, v in ROWS[row].items() if metric == "answer_correctness"
            or k != "ground_truth"}
    plain = Recording()
    ran = localeval.evaluate([data], [metric], judge=plain, no_cache=True)
    ours = Recording()
    got = bb.judge_one(bb.Counting(ours), _set(metric, "zh" if row == "zh" else "en"),
                       bb.VARIANTS["default"], Sample(**data))
    assert plain.requests, "the metric asked the judge"
    assert [(r.messages, r.answer_schema, r.probe_fields, r.max_tokens) for r in ours.requests] == [
        (r.messages, r.answer_schema, r.probe_fields, r.max_tokens) for r in plain.requests]
    assert got["headline"] == ran.records[0].scores[metric]
    assert got["weighted"] == ran.records[0].scores.get(metric + bb.WEIGHTED)
    assert got["requests"] == len(plain.requests)
    if row == "long":  # the evidence windows were used: the context was narrowed per claim
        assert all(LONG_EN not in r.messages[-1]["content"] for r in plain.requests)


def _users(variant: str, row: str = "en", metric: str = "faithfulness") -> list[str]:
    judge = Recording()
    data = {k: v for k, v in ROWS[row].items() if k != "ground_truth"}
    bb.judge_one(bb.Counting(judge), _set(metric, "zh" if row == "zh" else "en"),
                 bb.VARIANTS[variant], Sample(**data))
    return [r.messages[-1]["content"] for r in judge.requests]


@pytest.mark.parametrize("row", ["en", "zh"])
def test_each_edit_removes_what_its_name_says_and_nothing_else(row: str) -> None:
    lang = "zh" if row == "zh" else "en"
    base = _users("default", row)[0]
    lines = base.split("\n")
    fence = bb.FENCE_MARK[lang]
    assert _users("no_fence", row)[0] == "\n".join(s for s in lines if fence not in s)
    rules = _users("no_rules", row)[0]
    assert rules == "\n".join(s for s in lines if not s.startswith(bb.RULES_START[lang]))
    example = _users("no_example", row)[0]
    assert not any(s.startswith(bb.EXAMPLE_START[lang]) for s in example.split("\n"))
    assert '{"verdicts"' not in example and len(example) < len(base)
    assert set(example.split("\n")) <= set(lines)
    short = _users("short", row)[0]
    assert fence not in short and '{"verdicts"' not in short and bb.RULES_START[lang] not in short
    assert set(short.split("\n")) <= set(example.split("\n"))
    reason = _users("reason", row)[0]
    assert bb.REASON_ITEM[lang] in reason


def test_reason_asks_a_reason_before_each_verdict_and_en_frame_asks_in_english() -> None:
    judge = Recording()
    data = {k: v for k, v in ROWS["zh"].items() if k != "ground_truth"}
    got = bb.judge_one(bb.Counting(judge), _set("faithfulness", "zh"), bb.VARIANTS["reason"],
                       Sample(**data))
    item = json.loads(judge.requests[0].answer_schema)
    assert "reason" in json.dumps(item) and got["headline"] is not None
    en = _users("en_frame", "zh")[0]
    assert en.startswith("Task: check numbered statements") and "泰桥" in en
    assert bb.settings_of(bb.VARIANTS["en_frame"], "zh")["support_threshold"] == 0.45
    assert prompts.render("en", "faithfulness_verdicts", contexts=["c"], statements=["s"]) == (
        bb.prompts.render("en", "faithfulness_verdicts", contexts=["c"], statements=["s"]))
    assert bb.FENCE_MARK["en"] in prompts.render(
        "en", "faithfulness_verdicts", contexts=["c"], statements=["s"])[-1]["content"]  # restored


def test_an_edit_a_template_lacks_is_an_error() -> None:
    with pytest.raises(bb.NotApplicable, match="no single fence line"):
        bb.drop_fence("Task.\nNothing else.\n", "en", "x.j2")
    with pytest.raises(bb.NotApplicable, match="example"):
        bb.drop_example("Task.\n", "en", "x.j2")


def test_a_run_on_a_fake_judge_writes_records_resumes_and_prints_the_table(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    base = {"question": "When did the Tay Bridge open?",
            "contexts": ["The Tay Bridge opened in 1878; Thomas Bouch designed it."]}
    pairs = [bb.Pair(f"p{i}", Sample(id=f"p{i}/good", answer="It opened in 1878.", **base),
                     Sample(id=f"p{i}/bad", answer="It opened in 1877, designed by Telford, "
                                                   "and was painted red.", **base))
             for i in range(2)]
    monkeypatch.setitem(bb.SETS, "tiny", bb.DevSet("faithfulness", "en", "hand-made",
                                                   lambda src: pairs, offset=0))
    judges: list[Recording] = []
    monkeypatch.setattr(bb, "make_judge", lambda profile, n_ctx: judges.append(Recording())
                        or judges[-1])
    argv = ["--set", "tiny", "--variants", "default,short", "--out", str(tmp_path)]
    assert bb.main(argv) == 0
    summary = json.loads(capsys.readouterr().out)
    f = summary["figures"]
    assert f["pairs"] == 2 and set(f["variants"]) == {"default", "short"}
    default, short = f["variants"]["default"], f["variants"]["short"]
    assert short["prompt_tokens_per_request"] < default["prompt_tokens_per_request"]
    assert default["headline"]["ties"] == 2  # every verdict 0: both answers score 0
    assert f["length"]["baseline"] == "longer"
    assert bb.main(argv) == 0  # everything is in the records: nothing asked again
    assert judges[1].requests == []
    assert json.loads(capsys.readouterr().out)["figures"] == f


def test_bad_arguments_are_one_line_and_exit_2(tmp_path: Path,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    assert bb.main(["--set", "halueval_qa", "--variants", "default,nope",
                    "--out", str(tmp_path)]) == 2
    assert bb.main(["--set", "halueval_qa", "--variants", "en_frame", "--out", str(tmp_path)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 2 and err[0].startswith("--variants: unknown nope")
    assert "English already" in err[1]


def test_the_window_variants_narrow_a_long_context_differently_and_are_restored() -> None:
    from localeval.metrics.claims import evidence

    framed = "Dundee harbour notes were compiled by the town clerk." + evidence.FRAME_GAP
    base = _users("default", "long")
    assert any(framed in u for u in base)  # a passage after its frame: the text's first sentence
    assert not any(framed in u for u in _users("no_window_frame", "long"))
    assert sum(map(len, _users("window_180", "long"))) <= sum(map(len, base))
    assert sum(map(len, _users("no_neighbours", "long"))) < sum(map(len, base))
    assert (evidence.MAX_WORDS, evidence.NEIGHBOURS) == (260.0, 1)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_a_context_set_pairs_the_rows_own_passage_with_another_rows_near_miss(lang: str) -> None:
    from tests.conftest import shared_data

    src = shared_data("dev/halluqa_dev.jsonl").parent
    for metric in ("context_precision", "context_recall", "context_relevance"):
        ds = bb.SETS[f"{metric}_{lang}"]
        assert (ds.metric, ds.language, ds.offset) == (metric, lang, 0)
    ds = bb.SETS[f"context_recall_{lang}"]
    pairs = ds.pairs(src)
    from scripts.bench import context_pairs

    rows = context_pairs.rows(lang, src)
    own = {r["id"]: r["context"] for r in rows}
    report_half = {r["id"] for r in rows[context_pairs.START:]}
    assert len(pairs) >= 30 and {p.pair_id for p in pairs} <= report_half
    for p in pairs:
        assert p.good.contexts == [own[p.pair_id]] and p.bad.contexts != p.good.contexts
        assert p.bad.contexts[0] in own.values()
        assert (p.good.question, p.good.answer, p.good.ground_truth) == (
            p.bad.question, p.bad.answer, p.bad.ground_truth)
    # the answers are the same, so the length-only baseline reads the contexts
    base = bb.variant_table.length_baseline(pairs, "longer", ds.length_of)
    assert base["of"] == "contexts" and base["ties"] < len(pairs)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_fit_pairs_share_no_row_with_the_reported_ones(lang: str) -> None:
    """context_precision's τ is fitted on these (scripts/provenance/fit_step_threshold.py)."""
    from scripts.bench import context_pairs
    from tests.conftest import shared_data

    src = shared_data("dev/halluqa_dev.jsonl").parent
    fit = bb.SETS[f"context_precision_{lang}_fit"].pairs(src)
    report = bb.SETS[f"context_precision_{lang}"].pairs(src)
    dev_ids = {r["id"] for r in context_pairs.rows(lang, src)}
    assert len(fit) >= 15 and not {p.pair_id for p in fit} & {p.pair_id for p in report}
    if lang == "en":  # HaluEval QA's train split, none of its passages a dev row's
        dev_passages = {r["context"] for r in context_pairs.rows(lang, src)}
        assert not {p.pair_id for p in fit} & dev_ids
        assert not {c for p in fit for c in (*p.good.contexts, *p.bad.contexts)} & dev_passages
    for p in fit:
        assert p.good.contexts != p.bad.contexts


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_bare_and_ask_last_replace_the_steps_templates_they_have_a_file_for(lang: str) -> None:
    row = {"question": "Q?", "ground_truth": "G.", "context": ["the passage"]}
    step = "context_precision_useful"
    base = prompts.render(lang, step, **row)[-1]["content"]
    for name in ("bare", "ask_last"):
        texts = bb.overrides(bb.VARIANTS[name], [step, "context_recall_verdicts"])
        assert set(texts) == {prompts.template_name(each, step) for each in prompts.LANGUAGES}
        with prompts.overridden(texts):
            asked = prompts.render(lang, step, **row)[-1]["content"]
        assert "the passage" in asked and "G." in asked
        if name == "ask_last":  # the packaged template, then the question after the material
            assert asked.startswith(base.rstrip())
            assert asked.rstrip().endswith("}。" if lang == "zh" else "}.")
        else:
            assert bb.FENCE_MARK[lang] not in asked and len(asked) < len(base)
    assert bb.settings_of(bb.VARIANTS["bare"], lang)["explain"] is False
    with pytest.raises(bb.NotApplicable, match="texts"):
        bb.overrides(bb.VARIANTS["bare"], ["faithfulness_verdicts"])


def test_the_useful_tau_is_the_middle_of_the_best_run(tmp_path: Path) -> None:
    from scripts.provenance import fit_step_threshold as fit

    own, near = [0.3, 0.4, 0.5, 0.9], [0.05, 0.1, 0.12, 0.6]
    points = fit.curve(own, near)
    best = [p["tau"] for p in points if p["balanced_accuracy"] == 0.875]
    assert best == [0.15, 0.2, 0.25, 0.3] and fit.choose(points) == 0.2
    folder = tmp_path / "en"
    folder.mkdir()
    (folder / "records.jsonl").write_text("".join(json.dumps(
        {"set": "context_precision_en_fit", "variant": "default", "side": side,
         "weighted": p}) + "\n" for side, ps in (("good", own), ("bad", near)) for p in ps))
    assert fit.load(folder) == ("en", own, near)


def test_a_claim_metric_is_fitted_on_its_claims_not_its_sample_mean(tmp_path: Path) -> None:
    from scripts.provenance import fit_step_threshold as fit

    folder = tmp_path / "zh"
    folder.mkdir()
    rows = [{"set": "context_recall_zh_fit", "variant": "default", "side": "good",
             "weighted": 0.55, "claim_p": [0.9, None, 0.2]},
            {"set": "context_recall_zh_fit", "variant": "default", "side": "bad",
             "weighted": 0.1, "claim_p": [0.1]}]
    (folder / "records.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert fit.load(folder) == ("zh", [0.9, 0.2], [0.1])
