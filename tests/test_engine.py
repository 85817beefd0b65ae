"""The batched judge engine: continuous batching, grammars per sequence, prefix reuse, limits,
and failures that reach every waiting caller instead of hanging."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from localeval.errors import JudgeError, PromptTooLong
from localeval.judge.base import JudgeReply, JudgeRequest
from localeval.judge.batched import _common_prefix, default_parallel, resolve_parallel
from localeval.schemas import Statements, schema_json, verdict_list

SYSTEM = "You are a careful evaluator. You answer with JSON only."
FACTS = [
    ("Who wrote Hamlet?", "Hamlet was written by William Shakespeare around 1600."),
    ("What is the capital of France?", "Paris is the capital of France and has the Eiffel Tower."),
    ("When did the Second World War end?", "It ended in 1945."),
    ("How tall is Mount Everest?", "Mount Everest is 8,849 metres tall and lies in Nepal."),
    ("What is H2O?", "H2O is water. It boils at 100 degrees Celsius at sea level."),
    ("Who painted the Mona Lisa?", "Leonardo da Vinci painted the Mona Lisa in Florence."),
]


def _statements(q: str, a: str, max_tokens: int = 160) -> JudgeRequest:
    user = ("Break the answer below into short atomic statements.\n\n"
            f"Question: {q}\nAnswer: {a}\n\nReply as {{\"statements\": [\"...\"]}}.")
    return JudgeRequest(step="faithfulness_statements", sample_id=q, max_tokens=max_tokens,
                        answer_schema=schema_json(Statements),
                        messages=[{"role": "system", "content": SYSTEM},
                                  {"role": "user", "content": user}])


def test_common_prefix() -> None:
    assert _common_prefix([1, 2, 3, 4], [1, 2, 3, 9], 10) == 3
    assert _common_prefix([1, 2, 3], [1, 2, 3, 4], 10) == 3
    assert _common_prefix([1, 2, 3], [1, 2, 3], 2) == 2  # leave a token to decode
    assert _common_prefix([5], [1], 10) == 0
    assert _common_prefix([], [1, 2], 10) == 0
    long = list(range(1000))
    assert _common_prefix(long, [*long[:700], -1], 5000) == 700


def test_default_parallel() -> None:
    assert default_parallel(gpu_offload=False) == 4
    assert default_parallel(gpu_offload=True) > 4
    assert resolve_parallel(3) == 3


@pytest.fixture(scope="module")
def tiny_path() -> Path:
    pytest.importorskip("llama_cpp")
    from conftest import _need, model_path

    return _need(model_path("tiny"))


def _engine(path: Path, **kw: object):  # type: ignore[no-untyped-def]
    from localeval.judge.batched import BatchedLlamaJudge

    return BatchedLlamaJudge(path, "test", n_ctx=1024, **kw)  # type: ignore[arg-type]


async def _gather(judge, requests: list[JudgeRequest]) -> list[JudgeReply | BaseException]:  # type: ignore[no-untyped-def]
    return await asyncio.gather(*(judge.complete(r) for r in requests), return_exceptions=True)


@pytest.mark.model
def test_batched_answers_parse_reuse_prefixes_and_repeat_exactly(tiny_path: Path) -> None:
    requests = [_statements(q, a) for q, a in FACTS]
    judge = _engine(tiny_path, parallel=4)
    try:
        first = asyncio.run(_gather(judge, requests))
        second = asyncio.run(_gather(judge, requests))  # same engine, prefixes now all cached
    finally:
        judge.close()
    again = _engine(tiny_path, parallel=4)
    try:
        third = asyncio.run(_gather(again, requests))
    finally:
        again.close()
    for reply in first:
        assert isinstance(reply, JudgeReply) and reply.finish_reason == "stop"
        Statements.model_validate_json(reply.text)  # the grammar forces the shape
    assert [r.text for r in first] == [r.text for r in third]  # type: ignore[union-attr]
    # the system prompt + instruction prefix is read once, not once per request
    processed = sum(r.prompt_tokens_processed for r in first)  # type: ignore[union-attr]
    assert processed < sum(r.prompt_tokens for r in first)  # type: ignore[union-attr]
    # a second pass finds more of its prompts already in the kept sequences
    assert sum(r.prompt_tokens_processed for r in second) < processed  # type: ignore[union-attr]


@pytest.mark.model
def test_batched_agrees_with_one_slot(tiny_path: Path) -> None:
    requests = [_statements(q, a) for q, a in FACTS]
    one, four = _engine(tiny_path, parallel=1), _engine(tiny_path, parallel=4)
    try:
        a = asyncio.run(_gather(one, requests))
        b = asyncio.run(_gather(four, requests))
    finally:
        one.close()
        four.close()
    same = sum(x.text == y.text for x, y in zip(a, b, strict=True))  # type: ignore[union-attr]
    assert same >= len(requests) - 1  # float results may differ with the batch's shape


@pytest.mark.model
def test_limits_are_that_request_s_error_only(tiny_path: Path) -> None:
    judge = _engine(tiny_path, parallel=3)
    huge = _statements("Q?", "word " * 2000)
    short = _statements(*FACTS[0], max_tokens=5)
    verdicts = JudgeRequest(step="faithfulness_verdicts", max_tokens=200,
                            answer_schema=schema_json(verdict_list(2, True)),
                            messages=[{"role": "user", "content": (
                                "Context: Paris is in France.\n1. Paris is in France.\n"
                                "2. Paris is in Spain.\nJudge each.")}])
    try:
        out = asyncio.run(_gather(judge, [huge, short, verdicts, _statements(*FACTS[1])]))
    finally:
        judge.close()
    assert isinstance(out[0], PromptTooLong) and "context window" in str(out[0])
    assert isinstance(out[1], JudgeReply) and out[1].finish_reason == "length"
    assert out[1].completion_tokens == 5
    assert isinstance(out[2], JudgeReply) and len(json.loads(out[2].text)["verdicts"]) == 2
    assert isinstance(out[3], JudgeReply) and out[3].finish_reason == "stop"


@pytest.mark.model
def test_engine_failure_fails_every_waiting_request(tiny_path: Path) -> None:
    judge = _engine(tiny_path, parallel=2)

    def broken() -> None:
        raise RuntimeError("simulated llama_decode failure")

    judge._step = broken  # type: ignore[method-assign]
    try:
        requests = [_statements(q, a) for q, a in FACTS]
        out = asyncio.run(asyncio.wait_for(_gather(judge, requests), 60))
        assert all(isinstance(r, JudgeError) and "simulated" in str(r) for r in out)
        with pytest.raises(JudgeError, match="simulated"):  # later requests fail at once
            asyncio.run(judge.complete(_statements(*FACTS[0])))
    finally:
        judge.close()


@pytest.mark.model
def test_closed_engine_refuses_requests(tiny_path: Path) -> None:
    judge = _engine(tiny_path, parallel=2)
    judge.close()
    with pytest.raises(JudgeError, match="closed"):
        asyncio.run(judge.complete(_statements(*FACTS[0])))
