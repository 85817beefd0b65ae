"""A rubric file is data, never code (issue 53 items 1, 6, 10 and the Lows on rubrics): its
template runs in a sandbox with no loader, is refused when it includes, imports or reads a name
starting with _, lies at or below its metrics file's folder and is recorded by sha256; a column
named like a method of the row model is read as the column; a yes/no rubric takes its own
template; a prompt too long for the window names its long part."""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest
from ray_judges import RubricJudge

import localeval
from localeval.cli import main
from localeval.config import Settings, load_config
from localeval.data.dataset import Sample
from localeval.errors import PromptTooLong
from localeval.judge.fake import FakeJudge
from localeval.metrics.rubric import user_template
from localeval.models.embed import HashEmbedder
from localeval.rubrics import RubricError, load_file
from localeval.runner import run

HEAD = """\
[covers_question]
requires = ["question", "answer"]
criteria = "The answer directly and completely answers every part of the question."
scale = [1, 5]
"""
ROWS = [{"id": "en1", "question": "When was the Eiffel Tower built?",
         "answer": "It was built in 1889.", "contexts": ["The tower was completed in 1889."]}]


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def evaluate(rows: list[dict[str, Any]], judge: Any, **settings: Any) -> Any:
    return run(rows, settings.pop("out", None), Settings(no_cache=True, **settings),
               judge=judge, embedder=HashEmbedder())


# --- item 1: a template cannot run code ------------------------------------------------------


def attacks(pwned: Path) -> dict[str, str]:
    """Templates that write `id` into `pwned` under a plain jinja2.Environment."""
    shell = f"id > {pwned}"
    return {
        "subclasses": (
            "{% for c in ().__class__.__base__.__subclasses__() %}"
            "{% if c.__name__ == 'catch_warnings' %}"
            "{{ c()._module.__builtins__['__import__']('os').popen('" + shell + "').read() }}"
            "{% endif %}{% endfor %}{{ answer }}"),
        "cycler globals": "{{ cycler.__init__.__globals__.os.popen('" + shell + "').read() }}",
        "attr filter": ("{{ (()|attr('__class__')|attr('__base__')|attr('__subclasses__'))() }}"
                        "{{ answer }}"),
        "item": "{{ answer['__class__'] }}",
        "include": "{% include 'other.j2' %}{{ answer }}",
        "import": "{% import 'other.j2' as o %}{{ answer }}",
        "from": "{% from 'other.j2' import x %}{{ answer }}",
        "extends": "{% extends 'other.j2' %}",
    }


@pytest.mark.parametrize("estimate", [False, True], ids=["run", "run --estimate"])
@pytest.mark.parametrize("attack", list(attacks(Path("x"))))
def test_a_template_that_reaches_for_code_is_refused_when_the_file_is_read(
        attack: str, estimate: bool, tmp_path: Path,
        capsys: pytest.CaptureFixture[str]) -> None:
    pwned = tmp_path / "pwned"
    write(tmp_path, "other.j2", "{{ answer }}")
    write(tmp_path, "t.j2", attacks(pwned)[attack])
    path = write(tmp_path, "rubrics.toml", HEAD + 'template = "t.j2"\n')
    rows = write(tmp_path, "rows.jsonl", "".join(json.dumps(r) + "\n" for r in ROWS))
    answers = write(tmp_path, "answers.json", json.dumps({"rubric": [{"reason": "r",
                                                                       "level": 5}]}))
    code = main(["run", str(rows), "--out", str(tmp_path / "out"), "--judge", "fake",
                 "--fake-answers", str(answers), "--metrics-file", str(path), "--no-cache",
                 "--quiet", "--metrics", "covers_question", *(["--estimate"] if estimate
                                                               else [])])
    err = capsys.readouterr().err.strip()
    assert not pwned.exists()
    assert code == 2 and len(err.splitlines()) == 1, err
    assert f"{path} [covers_question] template" in err, err
    assert "Traceback" not in err


def _built_at_render(pwned: Path) -> str:
    """The subclasses walk with every name built from pieces: no check of the text sees it."""
    return ("{% set u = '_' ~ '_' %}"
            "{% for c in (()|attr(u ~ 'class' ~ u)|attr(u ~ 'base' ~ u)"
            "|attr(u ~ 'subclasses' ~ u))() %}"
            "{% if c|attr(u ~ 'name' ~ u) == 'catch_warnings' %}"
            "{{ ((c()|attr(u[0] ~ 'module')|attr(u ~ 'builtins' ~ u))[u ~ 'import' ~ u]('os'))"
            ".popen('id > " + str(pwned) + "').read() }}"
            "{% endif %}{% endfor %}{{ answer }}")


def test_the_sandbox_refuses_at_render_time_what_the_text_does_not_show(
        tmp_path: Path) -> None:
    """A name built at render time passes the check of the text; the sandbox refuses it: the
    row's rubric fails with one line, and nothing runs."""
    pwned = tmp_path / "pwned"
    r = localeval.rubric("covers_question", criteria="Answers it.",
                         template=_built_at_render(pwned))
    judge = FakeJudge({"rubric": [{"reason": "r", "level": 5}]})
    record = evaluate(ROWS, judge, rubrics=[r], metrics=["covers_question"]).records[0]
    assert not pwned.exists()
    error = record.errors["covers_question"]
    assert "\n" not in error and "python [covers_question] template" in error, error
    assert "cannot be rendered for this row" in error and "internal error" not in error, error
    assert "covers_question" not in record.scores


def test_run_estimate_renders_in_the_sandbox_too(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    pwned = tmp_path / "pwned"
    write(tmp_path, "t.j2", _built_at_render(pwned))
    path = write(tmp_path, "rubrics.toml", HEAD + 'template = "t.j2"\n')
    rows = write(tmp_path, "rows.jsonl", "".join(json.dumps(r) + "\n" for r in ROWS))
    answers = write(tmp_path, "answers.json", "[]")
    main(["run", str(rows), "--judge", "fake", "--fake-answers", str(answers), "--estimate",
          "--metrics-file", str(path), "--no-cache", "--metrics", "covers_question"])
    said = capsys.readouterr()
    assert not pwned.exists()
    assert "Traceback" not in said.err
    assert f"{path} [covers_question] template: cannot be rendered for this row" in (
        said.out + said.err)


# --- item 1: the template file lies at or below the metrics file's folder --------------------


def _outside(tmp_path: Path) -> dict[str, str]:
    home = Path(os.path.expanduser("~"))
    return {"..": "../t.j2", "absolute": str(tmp_path / "t.j2"), "home": "~/t.j2",
            "absolute elsewhere": "/etc/passwd", "link": "link.j2",
            "dotdot deeper": "sub/../../t.j2", "home elsewhere": f"~{home.name}/x.j2"}


@pytest.mark.parametrize("case", list(_outside(Path("x"))))
def test_a_template_outside_the_metrics_files_folder_is_refused(
        case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write(tmp_path, "t.j2", "{{ answer }}")  # readable, but outside conf/
    (tmp_path / "conf").mkdir()
    (tmp_path / "conf" / "link.j2").symlink_to(tmp_path / "t.j2")
    named = _outside(tmp_path)[case]
    path = write(tmp_path / "conf", "rubrics.toml", HEAD + f"template = {json.dumps(named)}\n")
    assert main(["metrics", "--metrics-file", str(path)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert f"{path} [covers_question] template" in err and "folder" in err, err
    with pytest.raises(RubricError):
        load_file(path)


def test_a_template_at_or_below_the_folder_is_read(tmp_path: Path) -> None:
    write(tmp_path / "conf" / "templates", "t.j2", "Below: {{ answer }}")
    write(tmp_path / "conf", "u.j2", "At: {{ answer }}")
    (tmp_path / "conf" / "inner.j2").symlink_to(tmp_path / "conf" / "u.j2")
    path = write(tmp_path / "conf", "rubrics.toml", HEAD + 'template = { en = '
                 '"templates/t.j2", zh = "templates/../inner.j2" }\n')
    (r,) = load_file(path)
    assert r.template == {"en": "Below: {{ answer }}", "zh": "At: {{ answer }}"}


# --- item 1: run.json, summary.json and the reports hold the template's sha256 ---------------


MARK = "GRADE-THIS-TEMPLATE-TEXT"


def test_the_run_files_hold_the_templates_sha256_not_its_text(tmp_path: Path) -> None:
    text = f"{MARK}: {{{{ criteria }}}}\n\nAnswer: {{{{ answer }}}}\n\n{{{{ reply }}}}\n"
    write(tmp_path, "t.j2", text)
    path = write(tmp_path, "rubrics.toml", HEAD + 'template = "t.j2"\n')
    settings = load_config(None, {"metrics_files": [path], "no_cache": True,
                                  "metrics": ["covers_question"]})
    judge = RubricJudge()
    run(ROWS, tmp_path / "out", settings, judge=judge, embedder=HashEmbedder())
    assert MARK in judge.requests[0].messages[1]["content"]  # the judge reads the text
    digest = "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()
    for name in ("run.json", "summary.json", "report.md", "report.html"):
        written = (tmp_path / "out" / name).read_text(encoding="utf-8")
        assert MARK not in written, name
    for name in ("run.json", "summary.json"):
        data = json.loads((tmp_path / "out" / name).read_text(encoding="utf-8"))
        held = data["inputs" if name == "run.json" else "settings"]["rubrics"][0]["template"]
        assert held == {"en": digest, "zh": digest}, name
    # the fingerprint still changes with the text
    first = json.loads((tmp_path / "out" / "run.json").read_text())["fingerprint"]
    write(tmp_path, "t.j2", text.replace(MARK, "Grade"))
    settings = load_config(None, {"metrics_files": [path], "no_cache": True,
                                  "metrics": ["covers_question"]})
    run(ROWS, tmp_path / "out2", settings, judge=RubricJudge(), embedder=HashEmbedder())
    assert json.loads((tmp_path / "out2" / "run.json").read_text())["fingerprint"] != first


def test_a_ray_worker_renders_the_template_text_its_plan_carries(tmp_path: Path) -> None:
    import asyncio

    from localeval import __version__, prompts
    from localeval.distributed.worker import EvalWorker, WorkerPlan, seal_plan
    from localeval.metrics import resolve

    write(tmp_path, "t.j2", f"{MARK}\n\nAnswer: {{{{ answer }}}}\n\n{{{{ reply }}}}\n")
    path = write(tmp_path, "rubrics.toml", HEAD + 'template = "t.j2"\n')
    settings = load_config(None, {"metrics_files": [path], "no_cache": True,
                                  "metrics": ["covers_question"]})
    metrics = resolve(settings.metrics, settings.rubrics)
    judge = RubricJudge()
    plan = WorkerPlan(settings=settings, metric_names=[m.name for m in metrics],
                      needed_names=["covers_question"], expected=[], version=__version__,
                      prompt_hashes=prompts.worker_prompt_hashes(metrics), judge=judge,
                      embedder=HashEmbedder())
    header, blob = seal_plan(plan)
    (tmp_path / "t.j2").unlink()  # the worker's machine has no such file
    worker = EvalWorker(header, blob)
    assert "error" not in worker.load()
    record, _ = asyncio.run(worker.evaluate(Sample(line=1, **ROWS[0])))
    assert not record.errors and "covers_question" in record.scores
    # RubricJudge's probabilities are a hash of the messages: the worker asked what a local
    # run with the template asks, not the packaged frame
    local = evaluate(ROWS, RubricJudge(), rubrics=settings.rubrics,
                     metrics=["covers_question"]).records[0]
    frame = evaluate(ROWS, RubricJudge(), rubrics=[settings.rubrics[0].model_copy(
        update={"template": {}})], metrics=["covers_question"]).records[0]
    assert record.scores == local.scores != frame.scores


# --- item 6: a column named like a method of the row model is the column -------------------


METHOD_ROWS = [
    {"id": "ad", "answer": "Buy now.", "copy": "Fresh bread, baked at dawn.",
     "schema": "CREATE TABLE bread (id INT)"},
    {"id": "no-copy", "answer": "Buy now.", "schema": "CREATE TABLE x (id INT)"},
    {"id": "no-schema", "answer": "Buy now.", "copy": "Cheap shoes."},
]


def test_a_column_named_like_a_method_is_read_as_the_column() -> None:
    r = localeval.rubric("ad_fits", criteria="The answer fits the ad copy and the schema.",
                         requires=["answer", "copy", "schema"], scale="yes/no")
    judge = RubricJudge()
    outcome = evaluate(METHOD_ROWS, judge, rubrics=[r], metrics=["ad_fits"])
    request, _reason = judge.requests
    content = request.messages[1]["content"]
    assert "\ncopy: Fresh bread, baked at dawn.\n" in content
    assert "\nschema: CREATE TABLE bread (id INT)\n" in content
    assert "bound method" not in content
    by_id = {rec.id: rec for rec in outcome.records}
    assert "ad_fits" in by_id["ad"].scores
    assert by_id["no-copy"].skipped["ad_fits"] == "needs 'copy' (missing or empty in this row)"
    assert by_id["no-schema"].skipped["ad_fits"] == (
        "needs 'schema' (missing or empty in this row)")


def test_a_template_gets_the_column_not_the_method_and_no_row_having_it_is_said(
        tmp_path: Path) -> None:
    r = localeval.rubric("ad_fits", criteria="Fits.", requires=["answer", "json", "dict"],
                         template="JSON: {{ json }}\nDICT: {{ dict }}\n{{ answer }}\n{{ reply }}")
    judge = RubricJudge()
    rows = [{"id": "p", "answer": "ok", "json": '{"a": 1}', "dict": "a word list"}]
    evaluate(rows, judge, rubrics=[r], metrics=["ad_fits"])
    content = judge.requests[0].messages[1]["content"]
    assert 'JSON: {"a": 1}\nDICT: a word list' in content and "bound method" not in content
    said: list[str] = []
    r2 = localeval.rubric("ad_copy", criteria="Fits.", requires=["answer", "copy"])
    run(ROWS, None, Settings(no_cache=True, rubrics=[r2], metrics=["ad_copy"]),
        judge=RubricJudge(), embedder=HashEmbedder(), log=said.append)
    assert any("no row has 'copy'; every row skips ad_copy" in s for s in said), said


# --- item 10: a yes/no rubric with its own template --------------------------------------------


@pytest.mark.parametrize("explain", [True, False])
def test_a_yes_no_rubric_with_its_own_template_scores_a_row(explain: bool) -> None:
    r = localeval.rubric("polite", criteria="The answer is polite.", scale="yes/no",
                         requires=["answer"],
                         template="{{ criteria }}\n\nAnswer: {{ answer }}\n\n{{ reply }}")
    judge = FakeJudge({"rubric": ["1"], "rubric_reason": [{"reason": "r"}] if explain else []})
    record = evaluate(ROWS, judge, rubrics=[r], metrics=["polite"],
                      explain=explain).records[0]
    assert not record.errors, record.errors
    assert record.scores == {"polite": 1.0, "polite.greedy": 1.0, "polite.weighted": 1.0}
    assert [q.step for q in judge.requests] == ["rubric", "rubric_reason"][:1 + explain]
    shape = {"en": "Reply 1 for yes, 0 for no.", "zh": "Reply 1 for yes, 0 for no."}
    for lang, text in shape.items():
        messages = user_template(r, lang, Sample(**ROWS[0]), [], explain)
        assert messages[1]["content"].endswith("\n\n" + text), messages


# --- Low: the prompt-too-long message names the long part --------------------------------------


class TooLongJudge:
    """Every request is too long for the window, as the engine would say."""

    name = "too-long"
    fingerprint = "too-long-v1"

    def sampling_key(self) -> str:
        return "too-long"

    async def complete(self, request: Any) -> Any:
        raise PromptTooLong(5000, 4096, 64)

    def close(self) -> None:
        pass


def test_a_prompt_too_long_names_the_rubrics_text_when_that_is_the_long_part() -> None:
    r = localeval.rubric("thorough", criteria="Check every detail. " * 400,
                         levels={1: "bad " * 50, 5: "good " * 50}, steps=["Read it."] * 20)
    record = evaluate(ROWS, TooLongJudge(), rubrics=[r], metrics=["thorough"]).records[0]
    error = record.errors["thorough"]
    assert "does not fit the context window of 4096" in error
    assert "the long part is the rubric's own text, its criteria, levels, steps" in error, error
    assert "python [thorough]" in error and "contexts" not in error, error
    assert re.search(r"\(8,\d{3} characters, 7,\d{3} of them in its criteria; ", error), error
    assert "shorten its criteria in python [thorough]" in error, error


def test_a_prompt_too_long_names_the_rubrics_levels_when_they_are_the_long_part() -> None:
    r = localeval.rubric("verbose", criteria="Good?",
                         levels={1: "bad " * 900, 5: "good " * 900})
    error = evaluate(ROWS, TooLongJudge(), rubrics=[r], metrics=["verbose"]).records[0] \
        .errors["verbose"]
    assert re.search(r"8,\d{3} of them in its levels; ", error), error
    assert "shorten its levels in python [verbose]" in error, error


def test_a_prompt_too_long_names_the_rows_field_when_that_is_the_long_part() -> None:
    r = localeval.rubric("short", criteria="Answers it.")
    rows = [{**ROWS[0], "answer": "The tower was built in 1889. " * 500}]
    record = evaluate(rows, TooLongJudge(), rubrics=[r], metrics=["short"]).records[0]
    error = record.errors["short"]
    assert "the long part is the row's material" in error and "in 'answer'" in error, error
    assert "shorten the row's answer" in error and "contexts" not in error, error


# --- the real judge -------------------------------------------------------------------------


@pytest.mark.model
@pytest.mark.xfail(strict=False, reason="measured 2026-12-02 on the digit frame (issue 54.2): "
                   "the 0.5B's P(yes) for the matching copy 0.583 against 0.595 for the other; "
                   "the JSON frame before it ranked them")
def test_the_real_judge_reads_a_column_named_copy_under_a_yes_no_template(
        tiny_judge: Any) -> None:
    """Items 6 and 10 with the 0.5B: the judge reads the `copy` column (not the model's method
    of that name), in the packaged frame and in a yes/no rubric's own template, and rates the
    row about bread above the one about shoes (measured: 0.882 / 0.851 in the frame, 0.755 /
    0.619 in the template; before: the frame showed `<bound method BaseModel.copy …>`, 0.884 /
    0.872, the row without a copy scored 0.836, and the template failed every row)."""
    from tests.conftest import OpenJudge

    criteria = "The ad copy is about bread."
    rubrics = [localeval.rubric("bread", criteria=criteria, requires=["copy"], scale="yes/no"),
               localeval.rubric("bread_own", criteria=criteria, requires=["copy"],
                                scale="yes/no", template="Ad copy:\n{{ copy }}\n\nCriterion: "
                                                         "{{ criteria }}\n\n{{ reply }}")]
    rows = [{"id": "bread", "copy": "Fresh sourdough bread, baked every morning at dawn."},
            {"id": "shoes", "copy": "Discount running shoes: 40% off all sneakers this week."},
            {"id": "none", "answer": "no copy here"}]
    judge = OpenJudge(tiny_judge)
    settings = Settings(no_cache=True, parallel=1, explain=False, metrics=["bread", "bread_own"],
                        rubrics=rubrics)
    by_id = {r.id: r for r in run(rows, None, settings, judge=judge,
                                  embedder=HashEmbedder()).records}
    asked = [q.messages[-1]["content"] for q in judge.requests]
    assert len(asked) == 4 and not any("bound method" in a for a in asked)
    assert sum(rows[0]["copy"] in a for a in asked) == 2
    for name in ("bread", "bread_own"):
        assert not by_id["bread"].errors and not by_id["shoes"].errors, by_id["bread"].errors
        assert by_id["bread"].scores[name] > by_id["shoes"].scores[name], (
            name, by_id["bread"].scores, by_id["shoes"].scores)
        assert by_id["none"].skipped[name] == "needs 'copy' (missing or empty in this row)"
