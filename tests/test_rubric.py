"""Rubric metrics (localeval/rubrics.py, metrics/rubric.py): a metrics file or
`localeval.rubric(...)`, one request per sample and rubric, the score from the judge's
probabilities, every bad file one line naming the file and the key, and the rest of localeval
(cache, resume, estimate, gates, compare, report, meta-eval, Ray's plan) working with them."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from ray_judges import RubricJudge

import localeval
from localeval.cli import main
from localeval.config import Settings, load_config
from localeval.errors import UsageError
from localeval.metrics import REGISTRY, resolve
from localeval.models.embed import HashEmbedder
from localeval.rubrics import RubricError, load_file, load_files
from localeval.runner import run

MINIMAL = """\
[covers_question]
requires = ["question", "answer"]
criteria = "The answer directly and completely answers every part of the question."
scale = [1, 5]
"""
ROWS = [
    {"id": "en1", "question": "When was the Eiffel Tower built, and by whom?",
     "answer": "It was built in 1889 by Gustave Eiffel's company.",
     "contexts": ["The Eiffel Tower was completed in 1889."], "source": "encyclopedia"},
    {"id": "zh1", "question": "长城有多长？", "answer": "长城全长约两万一千公里。",
     "contexts": ["长城总长度约为21196公里。"], "source": "百科"},
]


def write(tmp_path: Path, text: str, name: str = "rubrics.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def evaluate(rows: list[dict[str, Any]], judge: Any = None, **settings: Any) -> Any:
    return run(rows, settings.pop("out", None), Settings(no_cache=True, **settings),
               judge=judge or RubricJudge(), embedder=HashEmbedder())


# --- the file and the Python helper -------------------------------------------------------


def test_the_minimal_file_and_the_python_helper_build_the_same_rubric(tmp_path: Path) -> None:
    (from_file,) = load_file(write(tmp_path, MINIMAL))
    built = localeval.rubric(
        "covers_question", requires=["question", "answer"], scale=[1, 5],
        criteria="The answer directly and completely answers every part of the question.")
    assert from_file == built.model_copy(update={"source": from_file.source})
    assert from_file.criteria == {"en": built.criteria["en"], "zh": built.criteria["en"]}
    assert from_file.values == (1, 2, 3, 4, 5) and from_file.steps == {}


def test_one_language_serves_both_and_a_run_says_so_once(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL.replace(
        'criteria = "The answer directly and completely answers every part of the question."',
        'criteria = { zh = "回答完整地回答了问题。" }'))
    (r,) = load_file(path)
    assert r.criteria == {"en": "回答完整地回答了问题。", "zh": "回答完整地回答了问题。"}
    said: list[str] = []
    run(ROWS, None, Settings(no_cache=True, rubrics=[r]), judge=RubricJudge(),
        embedder=HashEmbedder(), log=said.append)
    notes = [s for s in said if "given in zh only" in s]
    assert len(notes) == 1 and str(path) in notes[0] and "[covers_question]" in notes[0]


BAD = {
    "unparsable": ("[covers_question\ncriteria = 1\n", "not valid TOML"),
    "unknown key": (MINIMAL + 'scael = [1, 3]\n', "[covers_question] scael: unknown key"),
    "one level": (MINIMAL.replace("[1, 5]", "[3, 3]"),
                  "[covers_question] scale: a scale needs at least two levels"),
    "built-in name": (MINIMAL.replace("[covers_question]", "[faithfulness]"),
                      "[faithfulness]: 'faithfulness' is a built-in metric"),
    "template variable": (MINIMAL + 'template = "t.j2"\n',
                          "[covers_question] template: uses {{ source }}, which the row lacks"),
    "level outside the scale": (MINIMAL + 'levels = { 7 = "x" }\n',
                                "[covers_question] levels: '7' is not a level of the scale"),
    "no criteria": ('[x]\nrequires = ["answer"]\n', "[x] criteria: missing"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_file_is_one_line_naming_the_file_and_the_key(
        case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text, expected = BAD[case]
    write(tmp_path, "Source: {{ source }}\nAnswer: {{ answer }}\n", "t.j2")
    path = write(tmp_path, text)
    assert main(["metrics", "--metrics-file", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert str(path) in err and expected in err, err
    with pytest.raises(RubricError):  # the same at a run's start, before any model loads
        resolve(None, load_files([path]))


def test_a_field_no_row_has_is_said_once_and_its_rows_are_skipped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, MINIMAL.replace('["question", "answer"]', '["answer", "page"]'))
    rows = write(tmp_path, "".join(json.dumps(r) + "\n" for r in ROWS), "rows.jsonl")
    answers = write(tmp_path, "[]", "answers.json")
    code = main(["run", str(rows), "--out", str(tmp_path / "out"), "--judge", "fake",
                 "--fake-answers", str(answers), "--metrics-file", str(path), "--no-cache",
                 "--quiet", "--metrics", "covers_question"])
    err = capsys.readouterr().err
    said = [line for line in err.splitlines() if "no row has 'page'" in line]
    assert code == 3 and len(said) == 1, err  # the only metric scored nothing (issue 53.16)
    assert err.strip().splitlines()[-1].startswith("error: nothing scored"), err
    assert f"{path} [covers_question] requires" in said[0]
    records = [json.loads(x) for x in (tmp_path / "out" / "results.jsonl").read_text().split(
        "\n") if x]
    assert all("covers_question" in r["skipped"] for r in records) and len(records) == 2


def test_the_metrics_command_lists_a_files_rubrics_with_their_fields(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    example = Path(localeval.__file__).parent / "examples" / "rubrics.toml"
    assert main(["metrics", "--metrics-file", str(example)]) == 0
    out = capsys.readouterr().out
    assert "covers_question" in out and "needs: question, answer  uses: judge" in out
    assert "scale 1..5" in out and "回答直接、完整地回答了问题的每一部分。" in out
    assert "grounded" in out and "needs: answer, contexts" in out
    assert "medical_advice" in out and "lower is better" in out


# --- the score and the request --------------------------------------------------------------


def _two_rubrics(**extra: Any) -> list[Any]:
    return [localeval.rubric("covers_question", criteria="Answers every part.", **extra),
            localeval.rubric("polite", criteria={"en": "The answer is polite.",
                                                 "zh": "回答有礼貌。"}, scale="yes/no")]


def test_one_level_request_per_sample_and_rubric_the_criterion_then_the_row() -> None:
    judge = RubricJudge()
    outcome = evaluate(ROWS, judge, rubrics=_two_rubrics(), metrics=["covers_question",
                                                                     "polite"])
    levels = [r for r in judge.requests if r.step == "rubric"]
    assert len(levels) == 4 and all(r.continuations for r in levels)  # prompt-only: the digits
    assert {tuple(r.continuations) for r in levels} == {("1", "2", "3", "4", "5"), ("0", "1")}
    assert {r.messages[0]["content"] for r in levels} == {"Answer with a single digit only."}
    by_sample: dict[str, list[str]] = {}
    for r in levels:
        by_sample.setdefault(r.sample_id, []).append(r.messages[1]["content"])
    for sample, texts in by_sample.items():  # the criterion, the row's fields, the reply
        lang = "en" if sample == "en1" else "zh"
        assert sorted(t.split("\n")[0] for t in texts) == sorted(
            r.criteria[lang] for r in _two_rubrics())
        assert all(t.endswith(("\n\nReply with one digit from 1 to 5.",
                               "\n\nReply 1 for yes, 0 for no.")) for t in texts)
    assert "\n\nquestion: 长城有多长？\nanswer: 长城全长约两万一千公里。\n\n" in by_sample["zh1"][0]
    for record in outcome.records:
        assert set(record.scores) == {"covers_question", "covers_question.greedy",
                                      "covers_question.weighted", "polite", "polite.greedy",
                                      "polite.weighted"}


def test_the_reason_is_asked_after_the_level_in_a_second_request() -> None:
    """With explanations on, the level request's conversation goes on: the greedy digit as the
    judge's answer, then the reason's request; the reason cannot move the score."""
    judge = RubricJudge()
    with_reason = evaluate(ROWS, judge, rubrics=_two_rubrics(),
                           metrics=["covers_question", "polite"]).records
    reasons = [r for r in judge.requests if r.step == "rubric_reason"]
    assert len(reasons) == 4 and [list(json.loads(r.answer_schema)["properties"])
                                  for r in reasons] == [["reason"]] * 4
    for r in reasons:
        level = next(q for q in judge.requests if q.step == "rubric" and
                     q.messages == r.messages[:2])
        said = r.messages[2]
        assert said["role"] == "assistant" and said["content"].isdigit()
        probs = asyncio.run(RubricJudge().complete(level)).choice_probs  # the level's reply
        assert said["content"] == max(probs, key=lambda c: (probs[c], -int(c)))
        assert r.messages[3]["content"].startswith(("Task: in one short sentence, say why "
                                                    "you answered ", "任务：用一句简短的话"))
    without = evaluate(ROWS, RubricJudge(), rubrics=_two_rubrics(), explain=False,
                       metrics=["covers_question", "polite"]).records
    assert [r.scores for r in with_reason] == [r.scores for r in without]


def test_the_score_is_the_probability_weighted_level_and_raw_the_greedy_one() -> None:
    judge = RubricJudge()
    (record, _) = evaluate(ROWS, judge, rubrics=_two_rubrics(),
                           metrics=["covers_question", "polite"]).records
    d = record.details["covers_question"]
    p = {int(k): v for k, v in d["p_levels"].items()}
    assert sum(p.values()) == pytest.approx(1, abs=1e-3)
    assert record.scores["covers_question"] == pytest.approx(
        (sum(v * q for v, q in p.items()) - 1) / 4, abs=1e-3)
    assert record.scores["covers_question.greedy"] == (d["level"] - 1) / 4
    assert d["reason"] == "because"
    polite = record.details["polite"]
    assert record.scores["polite"] == pytest.approx(polite["p_verdict"], abs=1e-4)
    assert record.scores["polite.greedy"] == polite["verdict"]


def test_without_explanations_no_reason_is_asked_or_kept() -> None:
    judge = RubricJudge()
    outcome = evaluate(ROWS[:1], judge, rubrics=_two_rubrics()[:1], explain=False,
                       metrics=["covers_question"])
    (request,) = judge.requests
    assert "reason" not in request.answer_schema
    assert "reason" not in outcome.records[0].details["covers_question"]
    assert request.messages[1]["content"].endswith("\n\nReply with one digit from 1 to 5.")


def test_a_judge_sure_of_one_level_gives_that_level_for_both_scores() -> None:
    from localeval.judge.fake import FakeJudge

    r = localeval.rubric("covers_question", criteria="Answers every part.", scale=[0, 2])
    judge = FakeJudge({"rubric": ["1"], "rubric_reason": [{"reason": "half"}]})
    record = evaluate(ROWS[:1], judge, rubrics=[r], metrics=["covers_question"]).records[0]
    assert record.scores == {"covers_question": 0.5, "covers_question.greedy": 0.5,
                             "covers_question.weighted": 0.5}
    assert record.details["covers_question"]["reason"] == "half"


class NoChoicesJudge(RubricJudge):
    """A judge that cannot score continuations: a prompt-only request gets no probabilities."""

    async def complete(self, request: Any) -> Any:
        reply = await super().complete(request)
        return reply.model_copy(update={"choice_probs": {}})


def test_a_judge_that_cannot_score_the_digits_is_one_line_per_row() -> None:
    r = localeval.rubric("covers_question", criteria="Answers every part.")
    record = evaluate(ROWS[:1], NoChoicesJudge(), rubrics=[r],
                      metrics=["covers_question"]).records[0]
    assert "covers_question" not in record.scores
    assert record.errors["covers_question"] == (
        "rubric: the judge gave no probability for each of 1, 2, 3, 4, 5 (this judge cannot "
        "score continuations)")


def test_any_column_named_in_requires_is_shown_under_its_name() -> None:
    judge = RubricJudge()
    r = localeval.rubric("cites", criteria="The answer fits its source.",
                         requires=["answer", "source"])
    evaluate(ROWS, judge, rubrics=[r], metrics=["cites"])
    en = next(q for q in judge.requests if q.sample_id == "en1").messages[1]["content"]
    assert ("\nanswer: It was built in 1889 by Gustave Eiffel's company.\n"
            "source: encyclopedia\n") in en
    zh = next(q for q in judge.requests if q.sample_id == "zh1").messages[1]["content"]
    assert "\nsource: 百科\n" in zh


def test_steps_written_or_drafted_once_per_language_and_cached(tmp_path: Path) -> None:
    written = localeval.rubric("covers_question", criteria="Answers every part.",
                               steps=["List the parts.", "Check each."])
    judge = RubricJudge()
    evaluate(ROWS[:1], judge, rubrics=[written], metrics=["covers_question"])
    assert "Evaluation steps:\n1. List the parts.\n2. Check each." in judge.requests[0].messages[
        1]["content"]
    drafted = written.model_copy(update={"steps": "draft"})
    rows = [*ROWS, {**ROWS[0], "id": "en2", "answer": "In 1889."}]
    judge = RubricJudge()
    cache = tmp_path / "c.sqlite"
    only = ["covers_question"]
    outcome = run(rows, None, Settings(cache=cache, rubrics=[drafted], metrics=only), judge=judge,
                  embedder=HashEmbedder())
    steps = [r for r in judge.requests if r.step == "rubric_steps"]
    assert len(steps) == 2  # one per language (en, zh), not one per sample
    assert sorted(r.messages[1]["content"].split("\n")[0][:5] for r in steps) == ["Task:",
                                                                                  "任务：写出"]
    assert len([r for r in judge.requests if r.step == "rubric"]) == 3
    assert len([r for r in judge.requests if r.step == "rubric_reason"]) == 3
    assert all("1. Read the answer.\n2. Grade it." in r.messages[1]["content"]
               for r in judge.requests if r.step == "rubric")
    assert outcome.records[0].details["covers_question"]["steps"] == ["Read the answer.",
                                                                      "Grade it."]
    again = RubricJudge()
    second = run(rows, None, Settings(cache=cache, rubrics=[drafted], metrics=only), judge=again,
                 embedder=HashEmbedder())
    assert again.requests == [] and second.summary["judge"]["cached"] == 8


def test_a_users_template_is_rendered_with_the_row_and_the_rubric(tmp_path: Path) -> None:
    write(tmp_path, "Grade {{ name }} ({{ lo }}..{{ hi }}): {{ criteria }}\n\n"
                    "Source: {{ source }}\nAnswer: {{ answer }}\n\n{{ reply }}\n", "t.j2")
    (r,) = load_file(write(tmp_path, MINIMAL.replace('["question", "answer"]',
                                                     '["answer", "source"]')
                           + 'template = "t.j2"\n'))
    judge = RubricJudge()
    evaluate(ROWS[:1], judge, rubrics=[r], metrics=["covers_question"])
    request, reason = judge.requests
    assert request.messages[0] == {"role": "system", "content": "Answer with a single digit only."}
    assert request.messages[1]["content"] == (
        "Grade covers_question (1..5): The answer directly and completely answers every part "
        "of the question.\n\nSource: encyclopedia\nAnswer: It was built in 1889 by Gustave "
        "Eiffel's company.\n\nReply with one digit from 1 to 5.")
    assert request.continuations == ["1", "2", "3", "4", "5"]
    assert reason.step == "rubric_reason" and reason.messages[:2] == request.messages


# --- everything else works with them --------------------------------------------------------


def test_the_api_takes_rubric_objects_and_metrics_files(tmp_path: Path) -> None:
    path = write(tmp_path, MINIMAL)
    by_file = localeval.evaluate(ROWS, metrics_files=[path], judge=RubricJudge(),
                                 embedder=HashEmbedder(), no_cache=True, metrics=[
                                     "covers_question"])
    by_object = localeval.evaluate(ROWS, metrics=[load_file(path)[0]], judge=RubricJudge(),
                                   embedder=HashEmbedder(), no_cache=True)
    assert [r.scores for r in by_file.records] == [r.scores for r in by_object.records]
    assert "covers_question" not in REGISTRY  # a run's rubrics are its own


def test_a_run_without_rubrics_keeps_its_settings_and_fingerprint() -> None:
    assert "rubrics" not in Settings().model_dump()
    assert [m.name for m in resolve(None)] == [m.name for m in REGISTRY.values() if m.default]


def test_cache_and_resume_serve_every_rubric_request(tmp_path: Path) -> None:
    rubrics = _two_rubrics()
    cache = tmp_path / "c.sqlite"
    only = ["covers_question", "polite"]
    first = run(ROWS, tmp_path / "out", Settings(cache=cache, rubrics=rubrics, metrics=only),
                judge=RubricJudge(), embedder=HashEmbedder())
    judge = RubricJudge()
    again = run(ROWS, tmp_path / "out2", Settings(cache=cache, rubrics=rubrics, metrics=only),
                judge=judge,
                embedder=HashEmbedder())
    assert judge.requests == [] and [r.scores for r in again.records] == [
        r.scores for r in first.records]
    judge = RubricJudge()
    run(ROWS, tmp_path / "out", Settings(cache=cache, rubrics=rubrics, metrics=only), judge=judge,
        embedder=HashEmbedder(), resume=True)
    assert judge.requests == []
    changed = [rubrics[0].model_copy(update={"criteria": {"en": "Other.", "zh": "其他。"}}),
               rubrics[1]]
    with pytest.raises(UsageError, match=r"cannot resume .* other settings \(rubrics"):
        run(ROWS, tmp_path / "out", Settings(cache=cache, rubrics=changed, metrics=only),
            judge=RubricJudge(), embedder=HashEmbedder(), resume=True)


def test_estimate_counts_exactly_the_requests_of_a_run(tmp_path: Path) -> None:
    from localeval.estimate.sizing import estimate_run

    answers = write(tmp_path, "[]", "answers.json")
    drafted = localeval.rubric("drafted", criteria="Answers every part.", steps="draft")
    settings = Settings(judge="fake", fake_answers=answers, no_cache=True,
                        rubrics=[*_two_rubrics(), drafted],
                        metrics=["covers_question", "polite", "drafted"])
    rows = [*ROWS, {**ROWS[0], "id": "en2"}, {"id": "no-question", "answer": "x"}]
    estimate = estimate_run(rows, settings, parallel=1, calibrate_now=False)
    judge = RubricJudge()
    outcome = run(rows, None, settings, judge=judge, embedder=HashEmbedder())
    assert {s: v["requests"] for s, v in estimate["steps"].items()} == outcome.summary[
        "judge"]["calls_by_step"] == {"rubric": 3 * 3, "rubric_reason": 3 * 3,
                                      "rubric_steps": 2}
    assert estimate["total"]["count"] == "exact"


def test_gates_compare_and_the_report_know_a_rubric(tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    from localeval.report.compare import compare_runs

    path = write(tmp_path, MINIMAL + '\n[medical]\nrequires = ["answer"]\n'
                 'criteria = "The answer gives medical advice."\nscale = "yes/no"\n'
                 "higher_is_better = false\n")
    rows = write(tmp_path, "".join(json.dumps(r) + "\n" for r in ROWS), "rows.jsonl")
    settings = load_config(None, {"metrics_files": [path], "no_cache": True,
                                  "metrics": ["covers_question", "medical"]})
    a = run(rows, tmp_path / "a", settings, judge=RubricJudge(), embedder=HashEmbedder())
    mean = a.summary["metrics"]["covers_question"]["mean"]
    assert 0 <= mean <= 1
    report = (tmp_path / "a" / "report.md").read_text(encoding="utf-8")
    assert "### Rubrics" in report and "The answer directly and completely answers" in report
    assert "| medical |" in report and "lower" in report
    html = (tmp_path / "a" / "report.html").read_text(encoding="utf-8")
    assert "The answer gives medical advice." in html
    low, high = mean - 0.01, mean + 0.01
    assert main(["report", str(tmp_path / "a"), "--fail-under",
                 f"covers_question={low}"]) == 0
    assert main(["report", str(tmp_path / "a"), "--fail-under",
                 f"covers_question={high}"]) == 1
    medical = a.summary["metrics"]["medical"]["mean"]
    assert main(["report", str(tmp_path / "a"), "--fail-under",
                 f"medical={medical + 0.01}"]) == 0  # lower is better: a ceiling
    assert main(["report", str(tmp_path / "a"), "--fail-under",
                 f"medical={medical - 0.01}"]) == 1
    assert "lower is better" in capsys.readouterr().err
    b = run(rows, tmp_path / "b", settings, judge=RubricJudge(), embedder=HashEmbedder())
    assert b.summary["metrics"] == a.summary["metrics"]
    rows_by_key = {r.key: r for r in compare_runs(tmp_path / "a", tmp_path / "b").rows}
    assert rows_by_key["covers_question"].higher_is_better
    assert not rows_by_key["medical"].higher_is_better


def test_run_gates_name_a_rubric_before_any_model_loads(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]
                                                        ) -> None:
    path = write(tmp_path, MINIMAL)
    rows = write(tmp_path, "".join(json.dumps(r) + "\n" for r in ROWS), "rows.jsonl")
    answers = write(tmp_path, json.dumps({"rubric": ["5", "4"], "rubric_reason": [
        {"reason": "r"}, {"reason": "r"}]}), "answers.json")
    base = ["run", str(rows), "--out", str(tmp_path / "o"), "--judge", "fake", "--fake-answers",
            str(answers), "--metrics-file", str(path), "--no-cache", "--quiet",
            "--metrics", "covers_question"]
    assert main([*base, "--fail-under", "covers_questoin=0.7"]) == 2
    assert "did you mean 'covers_question'" in capsys.readouterr().err
    # the fake judge never passes a gate outside the test suite; here (allowed) 0.875 ≥ 0.7
    assert main([*base, "--fail-under", "covers_question=0.7"]) == 0


def test_meta_eval_takes_a_metrics_file(tmp_path: Path) -> None:
    from localeval.meta_eval.run import evaluate as meta_evaluate

    path = write(tmp_path, MINIMAL)
    pairs = write(tmp_path, "".join(json.dumps(
        {"pair_id": f"p{i}", "preferred": "a", "a": {k: v for k, v in r.items() if k != "id"},
         "b": {**{k: v for k, v in r.items() if k != "id"}, "answer": "No idea."}}) + "\n"
        for i, r in enumerate(ROWS)), "pairs.jsonl")
    settings = load_config(None, {"metrics_files": [path], "no_cache": True,
                                  "metrics": ["covers_question"]})
    outcome = meta_evaluate(pairs, tmp_path / "me", settings, judge=RubricJudge(),
                            embedder=HashEmbedder())
    figures = json.loads((tmp_path / "me" / "meta_eval.json").read_text(encoding="utf-8"))
    assert figures["score"] == "covers_question"
    assert {r.id for r in outcome.records.values()} == {"p0/a", "p0/b", "p1/a", "p1/b"}
    assert all("covers_question" in r.scores for r in outcome.records.values())


def test_a_ray_worker_gets_the_files_content_in_its_plan(tmp_path: Path) -> None:
    """The plan a Ray worker opens holds the rubrics themselves: the worker reads no file."""
    import asyncio

    from localeval import __version__, prompts
    from localeval.data.dataset import Sample
    from localeval.distributed.worker import EvalWorker, WorkerPlan, seal_plan

    path = write(tmp_path, MINIMAL)
    settings = load_config(None, {"metrics_files": [path], "no_cache": True,
                                  "metrics": ["covers_question"]})
    metrics = resolve(settings.metrics, settings.rubrics)
    plan = WorkerPlan(settings=settings, metric_names=[m.name for m in metrics],
                      needed_names=["covers_question"], expected=[], version=__version__,
                      prompt_hashes=prompts.worker_prompt_hashes(metrics), judge=RubricJudge(),
                      embedder=HashEmbedder())
    header, blob = seal_plan(plan)
    path.unlink()  # the worker's machine has no such file
    worker = EvalWorker(header, blob)
    assert "error" not in worker.load()
    record, _ = asyncio.run(worker.evaluate(Sample(line=1, **{
        k: v for k, v in ROWS[0].items()})))
    local = evaluate(ROWS[:1], rubrics=settings.rubrics, metrics=["covers_question"]).records[0]
    assert record.scores["covers_question"] == local.scores["covers_question"]
    assert record.scores.keys() == local.scores.keys()


def test_refusal_is_a_rubric_of_the_same_machinery() -> None:
    from localeval.metrics.refusal import FRAME, RUBRIC
    from localeval.metrics.rubric import REASON_STEP

    m = REGISTRY["refusal"]
    assert m.steps == (FRAME.step, REASON_STEP) and RUBRIC.scale == "yes/no"
    assert m.fn.__qualname__.startswith("rubric_metric")


# --- the real judge -------------------------------------------------------------------------


LONG_ROW = {"id": "long", "question": "What did the survey of the river find, and where?",
            "answer": " ".join(f"Station {i} on the river recorded {i + 3} herons and {2 * i} "
                               "ducks." for i in range(12)),
            "contexts": ["The survey counted herons and ducks at twelve stations."]}


@pytest.mark.model
def test_the_same_bytes_at_parallel_1_and_4_and_the_reason_reads_only_its_turn(
        tmp_path: Path) -> None:
    from tests.conftest import model_path

    model_path("tiny")
    example = Path(localeval.__file__).parent / "examples" / "rubrics.toml"
    rows = [{k: v for k, v in r.items() if k != "source"} for r in ROWS]
    outs = {}
    for parallel in (1, 4):
        settings = load_config(None, {"metrics_files": [example], "profile": "tiny",
                                      "no_cache": True, "parallel": parallel, "explain": False,
                                      "metrics": ["covers_question", "grounded"]})
        outcome = run(rows, tmp_path / f"p{parallel}", settings)
        outs[parallel] = (tmp_path / f"p{parallel}" / "results.jsonl").read_bytes()
        assert outcome.summary["judge"]["calls"] == 4
    assert outs[1] == outs[4]
    for line in outs[1].decode().splitlines():
        r = json.loads(line)
        assert 0 <= r["scores"]["covers_question"] <= 1 and not r["errors"]
        assert abs(sum(r["details"]["covers_question"]["p_levels"].values()) - 1) < 1e-3
    # with explanations on, the reason's request goes on from the level's conversation: the
    # engine reads only its new turn, not the row again
    settings = Settings(profile="tiny", no_cache=True, parallel=1, explain=True,
                        metrics=["covers_question"], rubrics=load_file(example)[:1])
    steps = run([LONG_ROW], None, settings).summary["judge"]["tokens_by_step"]
    read = steps["rubric_reason"]["prompt_tokens_processed"]
    assert read < steps["rubric"]["prompt_tokens_processed"] / 4, steps


def test_a_config_file_lists_metrics_files_relative_to_itself(tmp_path: Path) -> None:
    (tmp_path / "conf").mkdir()
    write(tmp_path / "conf", MINIMAL)
    config = write(tmp_path / "conf", 'metrics_files = ["rubrics.toml"]\n', "localeval.toml")
    settings = load_config(config, {})
    assert [r.name for r in settings.rubrics] == ["covers_question"]
    assert "covers_question" in [m.name for m in resolve(None, settings.rubrics)]
    with pytest.raises(RubricError, match="defined twice"):
        load_config(config, {"metrics_files": [tmp_path / "conf" / "rubrics.toml"] * 2})


def test_the_labelling_page_offers_a_runs_rubrics_with_their_criteria(tmp_path: Path) -> None:
    """Issue 44 item 1: a metrics file's rubrics are labelled on the page as built-ins are."""
    from localeval.labelpage.session import RunSession

    evaluate(ROWS, rubrics=_two_rubrics(), metrics=["covers_question", "polite"],
             out=tmp_path / "run")
    session = RunSession(tmp_path / "run", who="tester")
    assert {"covers_question", "polite"} <= set(session.metrics)
    assert session._description("covers_question") == "Answers every part."
    assert session.view("polite").ids


AGREES = localeval.rubric(
    "agrees", requires=["question", "answer", "ground_truth"], scale="yes/no",
    criteria={"en": "The answer agrees with the reference answer: nothing it says contradicts "
                    "the reference.",
              "zh": "回答与参考答案一致：回答中没有与参考答案矛盾的说法。"})
COVERS = localeval.rubric(
    "covers", requires=["question", "answer"], scale=[1, 5],
    criteria={"en": "The answer directly and completely answers every part of the question.",
              "zh": "回答直接、完整地回答了问题的每一部分。"})
CLEAR = [  # (id, question, reference, good answer, bad answer): clear cases, en and zh
    ("en-capital", "What is the capital of France?", "Paris is the capital of France.",
     "The capital of France is Paris.", "The capital of France is Berlin."),
    ("zh-capital", "中国的首都是哪座城市？", "中国的首都是北京。",
     "中国的首都是北京。", "中国的首都是上海。"),
    ("en-tower", "When was the Eiffel Tower built, and by whom?",
     "It was built from 1887 to 1889 by Gustave Eiffel's company.",
     "It was built from 1887 to 1889 by Gustave Eiffel's company.", "It is a tower."),
    ("zh-tower", "埃菲尔铁塔是什么时候、由谁建造的？",
     "它由古斯塔夫·埃菲尔的公司于1887年至1889年建造。",
     "它由古斯塔夫·埃菲尔的公司于1887年至1889年建造。", "它是一座塔。"),
]


@pytest.mark.model_small
def test_the_real_judge_ranks_clear_cases_in_en_and_zh(small_judge: Any) -> None:
    """The 1.5B judge on the default frame: a right answer above a wrong one (yes/no, against
    the reference) and a full answer above an empty one (1-5), in en and zh (the reason's
    request, after the level, cannot move the score: the fake-judge tests; here without it)."""
    from tests.conftest import OpenJudge

    got = {}
    for rubric, cases in ((AGREES, CLEAR[:2]), (COVERS, CLEAR[2:])):
        rows = [{"id": f"{cid}/{side}", "question": q, "ground_truth": ref, "answer": a}
                for cid, q, ref, good, bad in cases for side, a in (("good", good), ("bad", bad))]
        judge = OpenJudge(small_judge)
        settings = Settings(no_cache=True, parallel=1, explain=False, rubrics=[rubric],
                            metrics=[rubric.name])
        records = run(rows, None, settings, judge=judge, embedder=HashEmbedder()).records
        assert not any(r.errors for r in records), [r.errors for r in records]
        assert len(judge.requests) == len(rows) and all(q.continuations for q in judge.requests)
        got.update({r.id: r.scores[rubric.name] for r in records})
    for cid, *_ in CLEAR:
        assert got[f"{cid}/good"] > got[f"{cid}/bad"], (cid, got)


def test_a_yes_no_rubrics_levels_are_said_to_be_left_out_of_the_frame() -> None:
    r = localeval.rubric("polite", criteria="The answer is polite.", scale="yes/no",
                         levels={"yes": "polite", "no": "rude"})
    assert any("does not show a yes/no rubric's level descriptions" in n for n in r.notes)
    judge = RubricJudge()
    evaluate(ROWS[:1], judge, rubrics=[r], metrics=["polite"], explain=False)
    assert "rude" not in judge.requests[0].messages[1]["content"]
    scale = localeval.rubric("covers", criteria="Answers it.", levels={1: "no", 5: "fully"})
    assert not scale.notes
    judge = RubricJudge()
    evaluate(ROWS[:1], judge, rubrics=[scale], metrics=["covers"], explain=False)
    assert "\n1: no\n5: fully\n" in judge.requests[0].messages[1]["content"]
