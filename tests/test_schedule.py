"""The engine and the estimate share one schedule (judge/llamacpp/schedule.py): replaying the
requests an engine served gives the decode calls it made and the prompt tokens it read."""

from __future__ import annotations

import asyncio
from collections import deque
from dataclasses import dataclass, field

from localeval.estimate.simulate import Speed, replay
from localeval.estimate.workload import RequestLoad
from localeval.judge.interface import JudgeReply
from localeval.judge.llamacpp.chunks import cuts
from localeval.judge.llamacpp.prefix_pool import NoMemory, PrefixPool, Slot
from localeval.judge.llamacpp.schedule import MAX_INVARIANT_STEP, admit, step
from tests.test_engine_fake import FakeBackend, FakeTokenizer, engine, request

CHUNK = 8
TEXTS = [("shared instructions for every row\n\n" if i % 3 else "") + f"row {i} asks {i * 7}"
         for i in range(7)]


def served(parallel: int) -> tuple[FakeBackend, list[JudgeReply]]:
    """TEXTS through an engine over the fake backend, all queued before it admits any."""
    backend = FakeBackend(n_seq=2 * parallel)
    judge = engine(backend, chunk=CHUNK, parallel=parallel)

    async def go() -> list[JudgeReply]:
        with judge._cond:  # the worker waits until every request is queued
            tasks = [asyncio.ensure_future(judge.complete(request(t))) for t in TEXTS]
            await asyncio.sleep(0)
        return list(await asyncio.wait_for(asyncio.gather(*tasks), 20))

    try:
        return backend, asyncio.run(go())
    finally:
        judge.close()


def test_the_replay_makes_the_calls_the_engine_made() -> None:
    tokenizer = FakeTokenizer()
    for parallel in (1, 2, 3):
        backend, replies = served(parallel)
        loads = []
        for i, (text, reply) in enumerate(zip(TEXTS, replies, strict=True)):
            tokens = tokenizer.prompt_tokens(request(text).messages)
            loads.append(RequestLoad("t", i, tokens, cuts(tokens, tokenizer.piece,
                                                          max_chunk=CHUNK, min_chunk=CHUNK // 2),
                                     [("gen", reply.completion_tokens)]))
        per_token = Speed(chunk_s=0.0, token_s=1.0, step_s=0.0, gen_token_s=1.0)
        totals = replay(loads, parallel=parallel, speed=per_token, keep=parallel)
        assert totals.decode_calls == len(backend.calls)
        assert totals.seconds == sum(len(c.tokens) for call in backend.calls for c in call)
        assert totals.processed["t"] == sum(r.prompt_tokens_processed for r in replies)
        assert totals.processed["t"] < totals.prompt_tokens["t"]  # a prefix was reused


@dataclass
class _Run:
    slot: Slot
    pending: list[int]
    order: int
    reading: bool = field(default=True)


def test_a_request_waits_for_the_prefix_being_read_and_keeps_its_place() -> None:
    pool = PrefixPool(NoMemory(), 4)
    head = list(range(100, 116))
    first = [*head, 1]
    slot, _ = pool.acquire(first, [16])
    running = [_Run(slot, list(first), 0)]  # still reading the shared head
    queue = deque(["same head", "other"])
    prompts = {"same head": ([*head, 2], [16]), "other": ([5, 6, 7], [])}
    started = list(admit(queue, running, 3, pool, prompts.get))
    assert started == ["other"] and list(queue) == ["same head"]


def test_generation_goes_in_groups_and_the_oldest_reader_reads() -> None:
    slot = Slot(0)
    running = [_Run(slot, [], order, reading=order in (3, 8)) for order in range(9, -1, -1)]
    groups: list[list[int]] = []
    read: list[int] = []
    step(running, lambda g: groups.append([r.order for r in g]), lambda r: read.append(r.order))
    assert [len(g) for g in groups] == [MAX_INVARIANT_STEP, MAX_INVARIANT_STEP]
    assert read == [3]


def test_the_replay_makes_the_calls_of_planned_answers() -> None:
    """A planned answer's first stretch is read with the prompt's last chunk where both fit in
    one call, else alone: workload.build lays them out as the engine reads them."""
    from localeval.estimate.workload import build
    from tests.test_plan import DIGIT

    tokenizer = FakeTokenizer()
    chunk = 96  # cuts after a paragraph break past MIN_CHUNK (64), as workload.build cuts
    instructions = "i" * 70 + "\n\n"
    claims = ["c" * (0, 20, 40, 60, 92)[i % 5] for i in range(9)]  # 92: no room for the answer
    asked = [request(instructions + f"window {i % 2}" * (8 + i) + "\n\n" + claims[i]
                     ).model_copy(update={"answer_schema": DIGIT})
             for i in range(9)]
    backend = FakeBackend(n_seq=2)
    judge = engine(backend, chunk=chunk, min_chunk=64, parallel=1)

    async def go() -> list[JudgeReply]:
        return [await judge.complete(r) for r in asked]

    try:
        replies = asyncio.run(go())
    finally:
        judge.close()
    loads = [build(r, i, tokenizer.prompt_tokens(r.messages), tokenizer,  # type: ignore[arg-type]
                   max_chunk=chunk, free_tokens=8.0, temperature=0.0)
             for i, r in enumerate(asked)]
    assert {load.answer_with_prompt for load in loads} == {True, False}
    per_token = Speed(chunk_s=0.0, token_s=1.0, step_s=0.0, gen_token_s=1.0)
    totals = replay(loads, parallel=1, speed=per_token, keep=1)
    assert totals.decode_calls == len(backend.calls)
    assert totals.seconds == sum(len(c.tokens) for call in backend.calls for c in call)
    assert totals.processed["t"] == sum(r.prompt_tokens_processed for r in replies)
    assert max(len(c.tokens) for call in backend.calls for c in call) <= chunk
