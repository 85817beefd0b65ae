"""The answer cache: content addressing, reruns served from it, its default place, --no-cache,
in-flight deduplication and damaged rows."""

from __future__ import annotations

import asyncio
import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from test_resume_kill import SleepyJudge

from localeval.config import Settings, default_cache_path
from localeval.errors import ConfigError
from localeval.judge.cache import AnswerCache, cache_key
from localeval.judge.client import JudgeClient
from localeval.judge.interface import JudgeReply, JudgeRequest
from localeval.judge.schemas import Statements
from localeval.runner import run

ROWS = [{"id": f"r{i}", "question": f"Who made thing {i}?",
         "answer": f"Person {i} made thing {i}.",
         "contexts": [f"Thing {i} was made by person {i}."]} for i in range(5)]


def _request(**changes: object) -> JudgeRequest:
    base = dict(step="faithfulness_statements", messages=[{"role": "user", "content": "hi"}],
                answer_schema='{"type": "object"}', max_tokens=64)
    return JudgeRequest(**{**base, **changes})  # type: ignore[arg-type]


def test_key_covers_model_prompt_schema_and_sampling() -> None:
    key = cache_key("m", "greedy", _request())
    assert key == cache_key("m", "greedy", _request())
    assert key != cache_key("other-model", "greedy", _request())
    assert key != cache_key("m", "temperature=0.7", _request())
    assert key != cache_key("m", "greedy", _request(answer_schema='{"type": "array"}'))
    assert key != cache_key("m", "greedy", _request(messages=[{"role": "user", "content": "ho"}]))
    assert key != cache_key("m", "greedy", _request(max_tokens=65))
    # the sample id and step name are labels, not content: the same prompt is the same answer
    assert key == cache_key("m", "greedy", _request(sample_id="x"))


def test_rerun_makes_no_judge_call(tmp_path: Path) -> None:
    settings = Settings(metrics=["faithfulness"], cache=tmp_path / "c.sqlite", language="en")
    first_judge = SleepyJudge(0)
    first = run(ROWS, tmp_path / "a", settings, judge=first_judge)
    assert first.summary["judge"]["calls"] == first_judge.calls > 0
    assert first.summary["judge"]["cached"] == 0
    second_judge = SleepyJudge(0)
    second = run(ROWS, tmp_path / "b", settings, judge=second_judge)
    assert second_judge.calls == 0
    assert second.summary["judge"]["calls"] == 0
    assert second.summary["judge"]["cached"] == first.summary["judge"]["calls"]
    assert [r.scores for r in second.records] == [r.scores for r in first.records]
    assert [r.details for r in second.records] == [r.details for r in first.records]


def test_default_cache_is_shared_by_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCALEVAL_CACHE_DIR", str(tmp_path / "shared"))
    settings = Settings(metrics=["faithfulness"], language="en")
    expected = tmp_path / "shared" / "judge-cache.sqlite"
    assert settings.cache_path() == default_cache_path() == expected
    run(ROWS, tmp_path / "a", settings, judge=SleepyJudge(0))
    again = run(ROWS, tmp_path / "b", settings, judge=SleepyJudge(0))
    assert again.summary["judge"]["calls"] == 0 and again.summary["judge"]["cached"] > 0
    assert again.summary["models"]["cache"] == str(default_cache_path())


def test_no_cache_neither_reads_nor_writes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCALEVAL_CACHE_DIR", str(tmp_path / "shared"))
    settings = Settings(metrics=["faithfulness"], language="en", no_cache=True)
    assert settings.cache_path() is None
    first = run(ROWS, tmp_path / "a", settings, judge=SleepyJudge(0))
    second = run(ROWS, tmp_path / "b", settings, judge=SleepyJudge(0))
    assert second.summary["judge"]["calls"] == first.summary["judge"]["calls"] > 0
    assert second.summary["judge"]["cached"] == 0
    assert not (tmp_path / "shared" / "judge-cache.sqlite").exists()


def test_cli_cache_flag(tmp_path: Path) -> None:
    from localeval.cli import build_parser

    args = build_parser().parse_args(["run", "d.jsonl", "--out", "o",
                                      "--cache", str(tmp_path / "x.db")])
    assert args.cache == tmp_path / "x.db"
    args = build_parser().parse_args(["run", "d.jsonl", "--out", "o", "--no-cache"])
    assert args.no_cache is True


def test_same_request_in_flight_is_sent_once(tmp_path: Path) -> None:
    judge = SleepyJudge(0.05)
    client = JudgeClient(judge, AnswerCache(tmp_path / "c.sqlite"))
    request = _request(messages=[{"role": "user", "content": "same"}])
    schema = json.dumps(Statements.model_json_schema())
    request = request.model_copy(update={"answer_schema": schema})

    async def both() -> list[Statements]:
        return list(await asyncio.gather(client.ask(request, Statements),
                                         client.ask(request, Statements)))

    a, b = asyncio.run(both())
    assert a == b
    assert judge.calls == 1
    assert (client.stats.calls, client.stats.cached) == (1, 1)
    client.close()


def test_damaged_row_is_a_miss_and_unusable_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "c.sqlite"
    cache = AnswerCache(path)
    cache.put("k", JudgeReply(text="{}", finish_reason="stop"))
    assert cache.get("k") is not None and cache.get("k").cached  # type: ignore[union-attr]
    with sqlite3.connect(path) as db:
        db.execute("UPDATE answers SET reply = 'not json' WHERE key = 'k'")
    assert cache.get("k") is None
    assert len(cache) == 1
    cache.close()
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ConfigError, match="--no-cache"):
        AnswerCache(bad)


def test_a_full_disk_at_commit_is_said_as_such(tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 53, Low: SQLite rolls back a COMMIT that fails on a full disk itself; the cache's
    own ROLLBACK then failed ("cannot rollback - no transaction is active") and hid why."""
    from localeval.judge import cache as cache_mod

    class FullDisk(sqlite3.Connection):
        def execute(self, sql: str, *args: Any) -> sqlite3.Cursor:  # type: ignore[override]
            if sql == "COMMIT":
                super().execute("ROLLBACK")
                raise sqlite3.OperationalError("database or disk is full")
            return super().execute(sql, *args)

    real = sqlite3.connect
    monkeypatch.setattr(cache_mod.sqlite3, "connect",
                        lambda *a, **k: real(*a, **k, factory=FullDisk))
    with pytest.raises(ConfigError) as info:
        AnswerCache(tmp_path / "answers.sqlite")
    assert "(database or disk is full)" in str(info.value), info.value
    assert "rollback" not in str(info.value)
