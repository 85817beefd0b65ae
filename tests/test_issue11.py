"""Issue 11, problem by problem: each test failed on the code before the fix (models verify and
the loader fuzz checks are in test_models.py and test_fuzz_loader.py, the faults in
test_faults.py)."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from localeval.cli import main
from localeval.config import Settings
from localeval.errors import ConfigError, RunInterrupted, UsageError
from localeval.judge.cache import MIGRATIONS, SCHEMA_VERSION, AnswerCache, forget_answers
from localeval.judge.client import JudgeClient
from localeval.judge.fake import FakeJudge
from localeval.judge.interface import JudgeRequest
from localeval.judge.schemas import statements_up_to
from localeval.models.embed import HashEmbedder
from localeval.runner import run
from tests.conftest import REPO, fake_run_args, shared_data
from tests.test_resume import answers, result_ids, rows
from tests.test_resume_kill import SleepyJudge

STATEMENTS = {"statements": ["The sky is blue."]}


def fake_run(samples: list[dict], out: Path, judge: Any = None, **kw: Any) -> Any:
    return run(samples, out, Settings(no_cache=True, claims="statements", metrics=["faithfulness"]),
               judge=judge or FakeJudge(answers(len(samples))), embedder=HashEmbedder(), **kw)


def one_line(err: str) -> str:
    err = err.strip()
    assert err.count("\n") == 0 and "Traceback" not in err, err
    return err


# ---- 1. --resume never deletes results ---------------------------------------------------------


def test_resume_with_rows_gone_from_the_dataset_is_refused_and_deletes_nothing(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    fake_run(rows(4), out)
    before = (out / "results.jsonl").read_bytes()
    with pytest.raises(UsageError, match=r"2 finished sample\(s\) there are not in the dataset"):
        fake_run(rows(2), out, resume=True)
    assert (out / "results.jsonl").read_bytes() == before


def test_a_changed_row_keeps_its_old_result_until_the_new_one_is_written(tmp_path: Path) -> None:
    class Interrupting(FakeJudge):
        async def complete(self, request: JudgeRequest):  # type: ignore[no-untyped-def]
            raise KeyboardInterrupt

    out = tmp_path / "out"
    samples = rows(4)
    fake_run(samples, out)
    samples[2]["answer"] = "Changed: the sky is green."
    with pytest.raises(RunInterrupted):  # Ctrl-C before the changed row was redone
        fake_run(samples, out, judge=Interrupting(answers(1)), resume=True)
    assert result_ids(out) == ["s00", "s01", "s02", "s03"]  # s02's old result is still there


# ---- 2. a cache write failure never hangs the run ----------------------------------------------


class FailingCache(AnswerCache):
    def put(self, key: str, reply: Any) -> None:
        raise sqlite3.OperationalError("database is locked")


def test_cache_write_failure_becomes_a_warning_not_a_hang(tmp_path: Path) -> None:
    judge = FakeJudge({"faithfulness_statements": [STATEMENTS] * 2})
    client = JudgeClient(judge, FailingCache(tmp_path / "c.sqlite"))
    warnings: list[str] = []
    client.warn = warnings.append
    request = JudgeRequest(step="faithfulness_statements", answer_schema="{}",
                           messages=[{"role": "user", "content": "x"}], max_tokens=64)
    schema = statements_up_to(3)

    async def both() -> list[Any]:  # the second waits on the first's answer (in flight)
        return await asyncio.wait_for(
            asyncio.gather(client.ask(request, schema), client.ask(request, schema)), 5
        )

    first, second = asyncio.run(both())
    assert first.statements == second.statements == ["The sky is blue."]
    assert len(warnings) == 1 and "database is locked" in warnings[0]
    assert "goes on without the cache" in (client.cache_error or "")
    assert client.cache is None


def test_a_run_whose_cache_fails_completes_and_says_so(tmp_path: Path) -> None:
    from localeval.models import backends

    original = backends.JudgeClient

    def failing_client(judge: Any, cache: Any = None, verifier: Any = None) -> JudgeClient:
        return original(judge, FailingCache(tmp_path / "c.sqlite") if cache is not None else None,
                        verifier)

    logs: list[str] = []
    settings = Settings(metrics=["faithfulness"],
        claims="statements", cache=tmp_path / "c.sqlite", language="en")
    mp = pytest.MonkeyPatch()
    mp.setattr(backends, "JudgeClient", failing_client)
    try:
        outcome = run(rows(3), tmp_path / "out", settings, judge=SleepyJudge(0.0), log=logs.append)
    finally:
        mp.undo()
    assert outcome.summary["complete"] and len(outcome.records) == 3
    assert "database is locked" in outcome.summary["judge"]["cache_error"]
    assert sum("warning: the answer cache" in m for m in logs) == 1


# ---- 3. one line, exit 2, instead of a traceback ------------------------------------------------


@pytest.fixture
def example(tmp_path: Path) -> tuple[Path, Path]:
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps(rows(1)[0]) + "\n", encoding="utf-8")
    ans = tmp_path / "answers.json"
    ans.write_text(json.dumps(answers(1)), encoding="utf-8")
    return data, ans


def test_out_naming_a_file_or_an_impossible_folder(
    tmp_path: Path, example: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    data, ans = example
    a_file = tmp_path / "file.txt"
    a_file.write_text("x")
    assert main(fake_run_args(data, ans, a_file)) == 2
    assert "is a file, not a folder" in one_line(capsys.readouterr().err)
    assert main(fake_run_args(data, ans, a_file / "sub")) == 2  # a folder under a file
    assert "cannot create --out" in one_line(capsys.readouterr().err)


@pytest.mark.parametrize("kind", ["garbage", "under a file", "newer schema"])
def test_unusable_cache_is_a_warning_and_the_run_goes_on(
    tmp_path: Path, example: tuple[Path, Path], capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """(Issue 29.4: was a one-line error; the README promises a warning and a run without it.)"""
    data, ans = example
    cache = tmp_path / "cache.sqlite"
    if kind == "garbage":
        cache.write_bytes(b"not sqlite " * 100)
    elif kind == "under a file":
        (tmp_path / "f").write_text("x")
        cache = tmp_path / "f" / "cache.sqlite"
    else:
        db = sqlite3.connect(cache)
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
        db.close()
    args = fake_run_args(data, ans, tmp_path / "out")
    args.remove("--no-cache")
    assert main([*args, "--cache", str(cache)]) == 0
    err = one_line(capsys.readouterr().err)
    assert err.startswith("warning:") and f"answer cache {cache}" in err and "without it" in err
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert f"answer cache {cache}" in summary["judge"]["cache_error"]


def test_cache_in_a_missing_folder_is_created(
    tmp_path: Path, example: tuple[Path, Path]
) -> None:
    data, ans = example
    args = fake_run_args(data, ans, tmp_path / "out")
    args.remove("--no-cache")
    cache = tmp_path / "new" / "deeper" / "cache.sqlite"
    assert main([*args, "--cache", str(cache)]) == 0 and cache.is_file()


def test_locked_cache_is_a_config_error(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    AnswerCache(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA journal_mode=DELETE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        with pytest.raises(ConfigError, match=r"cannot be used .*locked"):
            AnswerCache(path, timeout=0.1)
    finally:
        holder.execute("ROLLBACK")
        holder.close()


@pytest.mark.parametrize("grade", ["NaN", "Infinity", "-1", '"high"', "[1]"])
def test_bad_relevance_grade_names_row_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], grade: str
) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(
        '{"id": "ok", "retrieved_ids": ["a"], "expected_relevance": {"a": 1}}\n'
        f'{{"id": "bad", "retrieved_ids": ["a"], "expected_relevance": {{"a": {grade}}}}}\n',
        encoding="utf-8",
    )
    code = main(["run", str(data), "--out", str(tmp_path / "o"), "--metrics", "ndcg", "--quiet"])
    err = capsys.readouterr().err
    assert code == 0 and "internal error" not in err
    assert "line 2 (id bad): field 'expected_relevance'" in err and "grade of id 'a'" in err


# ---- 4. every setting checked before any model loads -------------------------------------------


def _no_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from localeval.models import backends

    def refuse(*_: Any, **__: Any) -> Any:
        raise AssertionError("a model was loaded")

    monkeypatch.setattr(backends, "make_judge", refuse)
    monkeypatch.setattr(backends, "make_embedder", refuse)


def test_at_zero_is_refused_once_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = tmp_path / "d.jsonl"
    data.write_text(
        "".join(json.dumps({"id": f"q{i}", "retrieved_ids": ["a"], "expected_ids": ["a"]}) + "\n"
                for i in range(3)), encoding="utf-8")
    assert main(["run", str(data), "--out", str(tmp_path / "o"), "--metrics", "retrieval",
                 "--at", "0,5", "--quiet"]) == 2
    assert "retrieval_at" in one_line(capsys.readouterr().err)
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("toml", "key"),
    [("correctness_weights = [0, 0]", "correctness_weights"),
     ("correctness_weights = [-1, 2]", "correctness_weights"),
     ("retrieval_gain = 'cubic'", "retrieval_gain")],
)
def test_bad_setting_in_a_config_file_is_refused_before_the_judge(
    tmp_path: Path, example: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, toml: str, key: str,
) -> None:
    _no_model(monkeypatch)
    data, ans = example
    config = tmp_path / "c.toml"
    config.write_text(toml + "\n", encoding="utf-8")
    args = fake_run_args(data, ans, tmp_path / "o", "--config", str(config),
                         metrics="answer_correctness")
    assert main(args) == 2
    assert key in one_line(capsys.readouterr().err)


@pytest.mark.parametrize("flag", ["--embedder", "--judge-model"])
def test_missing_model_paths_are_refused_before_any_model_loads(
    tmp_path: Path, example: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch, flag: str,
) -> None:
    _no_model(monkeypatch)
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({**rows(1)[0], "ground_truth": "The sky is blue."}) + "\n")
    assert main(["run", str(data), "--out", str(tmp_path / "o"), "--metrics",
                 "faithfulness,answer_similarity", flag, str(tmp_path / "nope"), "--quiet"]) == 2
    assert f"{flag} {tmp_path / 'nope'}" in one_line(capsys.readouterr().err)


def test_a_judge_model_that_is_not_gguf_is_refused(
    tmp_path: Path, example: tuple[Path, Path], capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_model(monkeypatch)
    data, _ = example
    fake = tmp_path / "model.gguf"
    fake.write_text("<html>404 not found</html>")
    assert main(["run", str(data), "--out", str(tmp_path / "o"), "--metrics", "faithfulness",
                 "--judge-model", str(fake), "--no-cache", "--quiet"]) == 2
    assert "is not a GGUF file" in one_line(capsys.readouterr().err)


# ---- 5. dev data found relative to the repository, loudly missing in CI -----------------------


def test_shared_data_fails_in_ci_and_skips_elsewhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="missing in CI"):
        shared_data("dev/no-such-file.jsonl")
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception):
        shared_data("dev/no-such-file.jsonl")


MACHINE_ROOT = "/" + "work" + "/"  # this development machine's checkout root


def test_no_absolute_machine_paths_in_tests_or_scripts() -> None:
    offenders = [
        f"{p.relative_to(REPO)}:{n}"
        for folder in ("tests", "scripts", "localeval")
        for p in sorted((REPO / folder).rglob("*.py"))
        for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
        if MACHINE_ROOT in line
    ]
    assert offenders == []


# ---- 6. the golden-prompt test cannot pass by comparing a file with itself ---------------------


def test_golden_update_mode_does_not_pass_and_is_refused_in_ci(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests import test_prompts_golden as golden

    monkeypatch.setattr(golden, "GOLDEN", tmp_path)  # rewrites land here, not in the repo
    monkeypatch.setenv("LOCALEVAL_UPDATE_GOLDEN", "1")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="never in CI"):
        golden.test_golden_prompt("en", "faithfulness_statements", True)
    monkeypatch.setenv("CI", "")
    with pytest.raises(pytest.skip.Exception, match="review the diff"):  # written, not passed
        golden.test_golden_prompt("en", "faithfulness_statements", True)
    assert (tmp_path / "en" / "faithfulness_statements.txt").is_file()


# ---- 7. one nDCG default everywhere --------------------------------------------------------------


def test_run_and_retrieval_subcommand_agree_on_graded_ndcg(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    grades = {"q1": {"a": 3, "b": 1, "c": 2}, "q2": {"d": 2, "e": 3}}
    ranked = {"q1": ["b", "x", "c", "a"], "q2": ["e", "y", "d"]}
    data = tmp_path / "d.jsonl"
    data.write_text("".join(
        json.dumps({"id": q, "retrieved_ids": ranked[q], "expected_relevance": grades[q]}) + "\n"
        for q in grades), encoding="utf-8")
    (tmp_path / "qrels").write_text("".join(
        f"{q} 0 {d} {g}\n" for q, gs in grades.items() for d, g in gs.items()))
    (tmp_path / "run").write_text("".join(
        f"{q} Q0 {d} {i + 1} {10 - i} t\n" for q, ds in ranked.items() for i, d in enumerate(ds)))
    out = tmp_path / "o"
    assert main(["run", str(data), "--out", str(out), "--metrics", "ndcg", "--quiet"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["retrieval"]["ndcg_gain"] == "linear"
    capsys.readouterr()
    assert main(["retrieval", "--qrels", str(tmp_path / "qrels"), "--run", str(tmp_path / "run"),
                 "--metrics", "ndcg", "--format", "json"]) == 0
    sub = json.loads(capsys.readouterr().out)
    assert sub["gain"] == "linear"
    assert summary["metrics"]["ndcg"]["mean"] == pytest.approx(sub["means"]["ndcg"], abs=1e-12)
    config = tmp_path / "exp.toml"
    config.write_text('retrieval_gain = "exponential"\n')
    out2 = tmp_path / "o2"
    assert main(["run", str(data), "--out", str(out2), "--metrics", "ndcg", "--quiet",
                 "--config", str(config)]) == 0
    exp = json.loads((out2 / "summary.json").read_text())
    assert exp["retrieval"]["ndcg_gain"] == "exponential"  # named in the summary
    assert exp["metrics"]["ndcg"]["mean"] != pytest.approx(summary["metrics"]["ndcg"]["mean"])
    assert "| ndcg gain | exponential |" in (out2 / "report.md").read_text()


# ---- 9. the answer cache has a schema version and a migration path ----------------------------


def _row(cache: AnswerCache) -> None:
    from localeval.judge.interface import JudgeReply

    cache.put("k", JudgeReply(text="{}", finish_reason="stop"))


def test_new_cache_is_stamped_and_an_unversioned_one_is_migrated(tmp_path: Path) -> None:
    fresh = AnswerCache(tmp_path / "new.sqlite")
    assert fresh.version == SCHEMA_VERSION >= 1
    fresh.close()
    legacy = tmp_path / "legacy.sqlite"  # a file of the layout before the version existed
    db = sqlite3.connect(legacy)
    db.execute("CREATE TABLE answers (key TEXT PRIMARY KEY, reply TEXT NOT NULL,"
               " created REAL DEFAULT (julianday('now')))")
    db.execute("INSERT INTO answers (key, reply) VALUES ('k', ?)",
               ('{"text": "{}", "finish_reason": "stop"}',))
    db.commit()
    db.close()
    cache = AnswerCache(legacy)
    assert cache.version == SCHEMA_VERSION and cache.get("k") is not None  # same keys: kept
    cache.close()


def test_a_key_change_migration_forgets_old_answers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "c.sqlite"
    cache = AnswerCache(path)
    _row(cache)
    cache.close()
    monkeypatch.setattr("localeval.judge.cache.SCHEMA_VERSION", SCHEMA_VERSION + 1)
    monkeypatch.setitem(MIGRATIONS, SCHEMA_VERSION, forget_answers)
    upgraded = AnswerCache(path)
    assert upgraded.version == SCHEMA_VERSION + 1 and len(upgraded) == 0
    assert upgraded.get("k") is None
    upgraded.close()


def test_a_cache_from_a_newer_localeval_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    db.close()
    with pytest.raises(ConfigError, match="written by a newer localeval"):
        AnswerCache(path)
