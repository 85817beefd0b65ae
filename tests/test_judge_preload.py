"""The judge model loads in a thread beside the embedder when no answer can come from the cache,
and on the first request that misses the cache otherwise (no model: open_engine is replaced)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from localeval.config import Settings
from localeval.errors import ModelError
from localeval.judge import llamacpp
from localeval.judge.cache import AnswerCache
from localeval.judge.interface import JudgeReply, JudgeRequest
from localeval.metrics import REGISTRY
from localeval.models.backends import build_backends

REQUEST = JudgeRequest(step="s", messages=[{"role": "user", "content": "q"}], answer_schema="{}",
                       max_tokens=8)


class StubEngine:
    def __init__(self) -> None:
        self.closed = False

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        return JudgeReply(text="{}", finish_reason="stop")

    def close(self) -> None:
        self.closed = True


def judge() -> llamacpp.LazyJudge:
    return llamacpp.LazyJudge(Path("m.gguf"), "sha", parallel=1)


def held_load(monkeypatch: pytest.MonkeyPatch) -> tuple[list[StubEngine], threading.Event]:
    """open_engine replaced by one that waits for the event, then opens a StubEngine (listed)."""
    opened: list[StubEngine] = []
    release = threading.Event()

    def open_engine(*args: Any, **kw: Any) -> StubEngine:
        release.wait(5)
        opened.append(StubEngine())
        return opened[-1]

    monkeypatch.setattr(llamacpp, "open_engine", open_engine)
    return opened, release


def test_a_started_load_serves_the_first_request_and_loads_once(
        monkeypatch: pytest.MonkeyPatch) -> None:
    opened, release = held_load(monkeypatch)
    lazy = judge()
    lazy.start_loading()
    lazy.start_loading()  # a second call starts nothing
    assert not lazy.loaded
    release.set()
    reply = asyncio.run(lazy.complete(REQUEST))
    assert reply.text == "{}"
    assert len(opened) == 1 and lazy.engine is opened[0]
    assert lazy.load_seconds is not None
    lazy.close()
    assert opened[0].closed


def test_a_failed_load_reaches_the_first_request_and_close_stays_quiet(
        monkeypatch: pytest.MonkeyPatch) -> None:
    def open_engine(*args: Any, **kw: Any) -> StubEngine:
        raise ModelError("could not load the judge model at m.gguf")

    monkeypatch.setattr(llamacpp, "open_engine", open_engine)
    lazy = judge()
    lazy.start_loading()
    with pytest.raises(ModelError, match="could not load the judge"):
        asyncio.run(lazy.complete(REQUEST))
    lazy.close()
    assert lazy.load_seconds is None


def test_close_waits_for_a_load_under_way_and_closes_what_it_loaded(
        monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[StubEngine] = []
    started = threading.Event()

    def open_engine(*args: Any, **kw: Any) -> StubEngine:
        started.set()
        opened.append(StubEngine())
        return opened[-1]

    monkeypatch.setattr(llamacpp, "open_engine", open_engine)
    lazy = judge()
    lazy.start_loading()
    started.wait(5)
    lazy.close()
    assert opened and opened[0].closed and lazy.engine is None


def test_a_request_cancelled_while_the_judge_loads_leaves_the_load_whole(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A run stopped (Ctrl-C, SIGTERM) while its first request waits for the load: the load
    still finishes (no "InvalidStateError" from its thread) and close closes what it loaded."""
    opened, release = held_load(monkeypatch)
    failures: list[Any] = []
    monkeypatch.setattr(threading, "excepthook", failures.append)
    lazy = judge()
    lazy.start_loading()

    async def stopped() -> None:
        waiting = asyncio.ensure_future(lazy.complete(REQUEST))
        await asyncio.sleep(0.05)
        waiting.cancel()
        await asyncio.gather(waiting, return_exceptions=True)

    asyncio.run(stopped())
    release.set()
    lazy.close()
    assert failures == [] and opened and opened[0].closed


@pytest.mark.parametrize(("cached", "no_cache", "loads"),
                         [(False, False, True), (True, False, False), (False, True, True)])
def test_the_judge_starts_loading_when_no_answer_can_come_from_the_cache(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cached: bool, no_cache: bool,
        loads: bool) -> None:
    cache = tmp_path / "c.sqlite"
    if cached:
        held = AnswerCache(cache)
        held.put("k", JudgeReply(text="{}", finish_reason="stop"))
        held.close()
    calls: list[str] = []
    lazy = judge()
    monkeypatch.setattr(lazy, "start_loading", lambda: calls.append("load"))
    settings = Settings(judge="fake", metrics=["faithfulness"], cache=cache, no_cache=no_cache,
                        shield="forms")
    backends = build_backends(settings, [REGISTRY["faithfulness"]], judge=lazy, preload=True)
    backends.close()
    assert calls == (["load"] if loads else [])
    lazy = judge()
    monkeypatch.setattr(lazy, "start_loading", lambda: calls.append("load"))
    build_backends(settings, [REGISTRY["faithfulness"]], judge=lazy).close()
    assert calls == (["load"] if loads else [])  # without preload: only on a request
