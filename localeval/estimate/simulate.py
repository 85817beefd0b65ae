"""The engine's schedule replayed without a model: the engine's own admission and step
(judge/llamacpp/schedule.py) over its own PrefixPool, each decode call priced by the calibration
(estimate/calibrate.py)."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from localeval.estimate.workload import RequestLoad
from localeval.judge.llamacpp import NoMemory, PrefixPool, Slot, admit, next_cut, step

SMALL = 64
"""Chunks shorter than this (answer reads, a prompt's last bit) are priced by their own line:
a few tokens cost far more per token than a full chunk."""


@dataclass(frozen=True)
class Speed:
    """Seconds of one decode call. A chunk of n tokens of one sequence at position `start`:
    `small_s + n * small_token_s` below SMALL tokens, else `chunk_s + n * token_s` plus
    `pos_s` per token per 1,000 positions of its mean position (attention grows with the
    prompt). A generation call of k sequences: `step_s + k * gen_token_s`. `request_s`: the
    engine's own time per request (grammar, bookkeeping)."""

    chunk_s: float
    token_s: float
    step_s: float
    gen_token_s: float
    request_s: float = 0.0
    small_s: float | None = None
    small_token_s: float = 0.0
    pos_s: float = 0.0

    def chunk(self, n: int, start: int = 0) -> float:
        if n < SMALL and self.small_s is not None:
            return self.small_s + n * self.small_token_s
        return self.chunk_s + n * self.token_s + n * (start + n / 2) / 1000 * self.pos_s

    def step(self, k: int) -> float:
        return self.step_s + k * self.gen_token_s


@dataclass
class _Active:
    load: RequestLoad
    order: int
    slot: Slot
    pending: list[int]  # prompt tokens still to read
    todo: deque[list] = field(default_factory=deque)  # ["read", n] / ["gen", steps left]

    @property
    def reading(self) -> bool:
        return bool(self.pending) or bool(self.todo and self.todo[0][0] == "read")

    @property
    def done(self) -> bool:
        return not self.pending and not self.todo


def _todo(load: RequestLoad) -> deque[list]:
    """The answer's calls: a read is one call; a generated stretch of n tokens takes n - 1
    generation calls (its first token comes from the call before)."""
    out: deque[list] = deque()
    for kind, n in load.answer:
        steps = n if kind == "read" else n - 1
        if steps > 0:
            out.append([kind, steps])
    return out


@dataclass
class Totals:
    """What the replay counted: per step requests and tokens, decode calls, seconds."""

    requests: dict[str, int] = field(default_factory=dict)
    prompt_tokens: dict[str, int] = field(default_factory=dict)
    processed: dict[str, int] = field(default_factory=dict)
    generated: dict[str, int] = field(default_factory=dict)
    forced: dict[str, int] = field(default_factory=dict)
    decode_calls: int = 0
    seconds: float = 0.0

    def add(self, table: dict[str, int], step: str, n: int) -> None:
        table[step] = table.get(step, 0) + n


def replay(loads: list[RequestLoad], *, parallel: int, speed: Speed | None, reuse: bool = True,
           keep: int | None = None) -> Totals:
    """Run the engine's schedule over `loads` (in the order they reach the judge)."""
    pool = PrefixPool(NoMemory(), parallel + (parallel if keep is None else keep), reuse=reuse)
    queue = deque(enumerate(loads))
    active: list[_Active] = []
    out = Totals()

    def cost(seconds: float) -> None:
        out.decode_calls += 1
        out.seconds += seconds

    def finish(a: _Active) -> None:
        if a.done:
            active.remove(a)
            pool.release(a.slot)
            if speed is not None:
                out.seconds += speed.request_s

    def generate(group: list[_Active]) -> None:
        if speed is not None:
            cost(speed.step(len(group)))
        for a in group:
            pool.extend(a.slot, [-1], prompt=False)
            a.todo[0][1] -= 1
            if not a.todo[0][1]:
                a.todo.popleft()
            finish(a)

    def read(a: _Active) -> None:
        start = len(a.slot.tokens)
        if a.pending:
            n_prompt = len(a.load.tokens)
            chunk = a.pending[:next_cut(a.load.cuts, start, n_prompt) - start]
            last = len(chunk) == len(a.pending)
            del a.pending[:len(chunk)]
            n = len(chunk)
            if last and a.load.answer_with_prompt and a.todo and a.todo[0][0] == "read":
                answer = a.todo.popleft()[1]  # the engine reads the answer's first stretch along
                pool.extend(a.slot, chunk + [-1] * answer, prompt=False)
                n += answer
            else:
                pool.extend(a.slot, chunk, prompt=True)
        else:
            n = a.todo.popleft()[1]
            pool.extend(a.slot, [-1] * n, prompt=False)
        if speed is not None:
            cost(speed.chunk(n, start))
        finish(a)

    while queue or active:
        for order, w in admit(queue, active, parallel, pool, lambda job: (job[1].tokens,
                                                                           job[1].cuts)):
            slot, reused = pool.acquire(w.tokens, w.cuts)
            active.append(_Active(w, order, slot, list(w.tokens[reused:]), _todo(w)))
            out.add(out.requests, w.step, 1)
            out.add(out.prompt_tokens, w.step, len(w.tokens))
            out.add(out.processed, w.step, len(w.tokens) - reused)
            out.add(out.generated, w.step, w.generated)
            out.add(out.forced, w.step, w.forced)
        step(active, generate, read)
    return out
