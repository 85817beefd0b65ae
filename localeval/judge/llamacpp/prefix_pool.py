"""The engine's sequence slots and the reuse of shared prompt prefixes between them.

Each slot is one KV stream. A finished request's tokens stay in its slot, so a later request
that begins the same way (same instructions, same contexts) starts from that prefix instead of
reading it again. Reuse stops at a cut of the new prompt (judge/llamacpp/chunks.py) and covers
only tokens that were read as prompt chunks: prompts are always read in chunks that end at their
cuts, which two prompts share over their common part, so a reused prefix holds exactly the KV
the request would have computed itself, and its answer does not depend on which request came
first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from localeval.judge.llamacpp.chunks import cut_at_or_before


class Memory(Protocol):
    """The KV operations the pool needs (LlamaBackend implements them)."""

    def seq_keep(self, seq_id: int, n: int) -> None: ...

    def seq_copy(self, src: int, dst: int, n: int) -> None: ...


class NoMemory:
    """KV operations that do nothing: a pool that keeps only its bookkeeping (the estimate's
    replay of the schedule, estimate/simulate.py)."""

    def seq_keep(self, seq_id: int, n: int) -> None:
        return None

    def seq_copy(self, src: int, dst: int, n: int) -> None:
        return None


@dataclass
class Slot:
    seq_id: int
    tokens: list[int] = field(default_factory=list)  # tokens whose KV the stream holds
    reusable: int = 0  # leading tokens read as prompt chunks
    busy: bool = False
    last_used: int = 0


def common_prefix(a: list[int], b: list[int], limit: int) -> int:
    """Length of the common prefix of a and b, at most `limit`."""
    n = min(len(a), len(b), limit)
    if n <= 0:
        return 0
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo] holds; a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


class PrefixPool:
    """`n_slots` KV streams; at most `parallel` busy at once, the others keep prefixes."""

    def __init__(self, memory: Memory, n_slots: int, *, reuse: bool = True) -> None:
        if n_slots < 1:
            raise ValueError("n_slots must be >= 1")
        self.memory, self.reuse = memory, reuse
        self.slots = [Slot(i) for i in range(n_slots)]
        self._clock = 0
        self.evictions = 0

    def reusable(self, slot: Slot, tokens: list[int], cuts: list[int]) -> int:
        """How much of `tokens` (cut at `cuts`) a request may take from `slot`: up to the last
        cut within the common prefix, leaving at least one token to read."""
        if not self.reuse:
            return 0
        n = common_prefix(slot.tokens[:slot.reusable], tokens, len(tokens) - 1)
        return cut_at_or_before(cuts, n)

    def best(self, tokens: list[int], cuts: list[int]) -> tuple[Slot | None, int]:
        """The slot holding the longest reusable prefix of `tokens`, and its length."""
        best, best_len = None, 0
        for slot in self.slots:
            n = self.reusable(slot, tokens, cuts)
            if n > best_len:
                best, best_len = slot, n
        return best, best_len

    def free(self) -> int:
        return sum(not s.busy for s in self.slots)

    def acquire(self, tokens: list[int], cuts: list[int]) -> tuple[Slot, int]:
        """A slot for a new request, holding the longest reusable prefix; (slot, reused)."""
        idle = [s for s in self.slots if not s.busy]
        if not idle:
            raise RuntimeError("no free slot")
        source, n = self.best(tokens, cuts)
        if source is not None and not source.busy:
            target = source
            self.memory.seq_keep(target.seq_id, n)
        else:  # an empty slot, else overwrite the least recently used kept prefix
            target = min(idle, key=lambda s: (bool(s.tokens), s.last_used))
            if target.tokens:
                self.evictions += 1
            if source is not None:
                self.memory.seq_copy(source.seq_id, target.seq_id, n)
            else:
                self.memory.seq_keep(target.seq_id, 0)
        target.tokens = tokens[:n]
        target.reusable = n
        target.busy = True
        self._touch(target)
        return target, n

    def extend(self, slot: Slot, tokens: list[int], *, prompt: bool) -> None:
        """Record tokens just decoded into the slot (`prompt`: a prompt chunk)."""
        if prompt and slot.reusable == len(slot.tokens):
            slot.reusable += len(tokens)
        slot.tokens.extend(tokens)

    def truncate(self, slot: Slot, n: int) -> None:
        self.memory.seq_keep(slot.seq_id, n)
        del slot.tokens[n:]
        slot.reusable = min(slot.reusable, n)

    def release(self, slot: Slot) -> None:
        slot.busy = False
        self._touch(slot)

    def worth_waiting(self, tokens: list[int], cuts: list[int],
                      reading: list[tuple[Slot, list[int]]]) -> bool:
        """True when a busy slot is still reading a prompt that will give `tokens` a longer
        reusable prefix (by a cut) than any slot holds now: wait for it, don't read it twice."""
        if not self.reuse:
            return False
        _, now = self.best(tokens, cuts)
        for slot, pending in reading:
            whole = slot.tokens + pending
            if cut_at_or_before(cuts, common_prefix(whole, tokens, len(tokens) - 1)) > now:
                return True
        return False

    def _touch(self, slot: Slot) -> None:
        self._clock += 1
        slot.last_used = self._clock
