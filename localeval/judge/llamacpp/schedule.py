"""The engine's schedule: which queued requests start, and what each step decodes.

The engine (judge/llamacpp/engine.py) runs it over real requests; the estimate
(estimate/simulate.py) runs the same functions over recorded ones, so the two cannot drift
apart. Both pass their own records of a request in a slot (`Running`) and say what a start or a
decode call does.

- `admit`: while fewer than `parallel` run, the next queued request starts in the slot holding
  the longest reusable prefix of its prompt, unless a request still reading its prompt will
  leave a longer one: then it waits (this changes speed, never answers).
- `step`: one generation call per `MAX_INVARIANT_STEP` generating requests, then one chunk of
  the oldest request that is reading (its prompt, a planned answer, a continuation).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from typing import Protocol, TypeVar

from localeval.judge.llamacpp.prefix_pool import PrefixPool, Slot

MAX_INVARIANT_STEP = 4
"""Tokens per generation decode call. Measured on the 1.5B judge (scripts/bench/bench_engine.py,
16 dev samples): steps of ≤ 4 tokens gave the same records as 1 token alone; steps of up to 8 did
not. llama.cpp's issue #24962 reports rows independent up to ~30 tokens on another CPU: the
threshold depends on the CPU's kernels, so the engine stays at the measured one."""


class Running(Protocol):
    """A request in a slot, as the schedule sees it."""

    slot: Slot
    pending: list[int]  # prompt tokens still to read

    @property
    def order(self) -> int: ...  # when it was queued: the oldest reads first

    @property
    def reading(self) -> bool: ...  # reading (a chunk next), else generating (a token next)


J = TypeVar("J")
R = TypeVar("R", bound=Running)


def admit(queue: deque[J], running: Sequence[Running], parallel: int, pool: PrefixPool,
          prompt: Callable[[J], tuple[list[int], list[int]] | None]) -> Iterator[J]:
    """The queued jobs to start now, in queue order. `prompt(job)` gives its tokens and cuts
    (None: drop the job). The caller starts each job yielded, taking its slot with
    `pool.acquire` and adding it to `running`, before the next is decided; jobs that wait for a
    prefix go back to the front of the queue, in their order."""
    deferred: list[J] = []
    try:
        while len(running) < parallel and queue:
            job = queue.popleft()
            found = prompt(job)
            if found is None:
                continue
            reading = [(r.slot, r.pending) for r in running if r.pending]
            if pool.worth_waiting(*found, reading):
                deferred.append(job)
                continue
            yield job
    finally:
        queue.extendleft(reversed(deferred))


def step(running: Sequence[R], generate: Callable[[list[R]], None],
         read: Callable[[R], None]) -> None:
    """One step: `generate` each group of up to MAX_INVARIANT_STEP generating requests (one
    decode call each), then `read` one chunk of the oldest reading request (one call)."""
    generating = [r for r in running if not r.reading]
    for first in range(0, len(generating), MAX_INVARIANT_STEP):
        generate(generating[first:first + MAX_INVARIANT_STEP])
    reading = [r for r in running if r.reading]
    if reading:
        read(min(reading, key=lambda r: r.order))
