"""The engine's sequence slots and the reuse of shared prompt prefixes between them.

Each slot is one KV stream. A finished request's tokens stay in its slot, so a later request
that begins the same way (same instructions, same contexts) starts from that prefix instead of
reading it again. Reuse is allowed only at multiples of `chunk` and only over tokens that were
read as prompt chunks: prompts are always read in chunks whose boundaries are multiples of
`chunk` counted from position 0, so a reused prefix holds exactly the KV the request would have
computed itself, and its answer does not depend on which request came first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol


class Memory(Protocol):
    """The KV operations the pool needs (LlamaBackend implements them)."""

    def seq_keep(self, seq_id: int, n: int) -> None: ...

    def seq_copy(self, src: int, dst: int, n: int) -> None: ...


@dataclass
class Slot:
    seq_id: int
    tokens: list[int] = field(default_factory=list)  # tokens whose KV the stream holds
    reusable: int = 0  # leading tokens read as aligned prompt chunks
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

    def __init__(self, memory: Memory, n_slots: int, chunk: int, *, reuse: bool = True) -> None:
        if chunk < 1 or n_slots < 1:
            raise ValueError("chunk and n_slots must be >= 1")
        self.memory, self.chunk, self.reuse = memory, chunk, reuse
        self.slots = [Slot(i) for i in range(n_slots)]
        self._clock = 0
        self.evictions = 0

    def reusable(self, slot: Slot, tokens: list[int]) -> int:
        """How much of `tokens` a request may take from `slot` (aligned; one token left over)."""
        if not self.reuse:
            return 0
        n = common_prefix(slot.tokens[:slot.reusable], tokens, len(tokens) - 1)
        return n // self.chunk * self.chunk

    def best(self, tokens: list[int]) -> tuple[Slot | None, int]:
        """The slot holding the longest reusable prefix of `tokens`, and its length."""
        best, best_len = None, 0
        for slot in self.slots:
            n = self.reusable(slot, tokens)
            if n > best_len:
                best, best_len = slot, n
        return best, best_len

    def free(self) -> int:
        return sum(not s.busy for s in self.slots)

    def acquire(self, tokens: list[int]) -> tuple[Slot, int]:
        """A slot for a new request, holding the longest reusable prefix; (slot, reused)."""
        idle = [s for s in self.slots if not s.busy]
        if not idle:
            raise RuntimeError("no free slot")
        source, n = self.best(tokens)
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
        """Record tokens just decoded into the slot (`prompt`: an aligned prompt chunk)."""
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

    def worth_waiting(self, tokens: list[int], reading: list[tuple[Slot, list[int]]]) -> bool:
        """True when a busy slot is still reading a prompt that will give `tokens` at least one
        more chunk of prefix than any slot holds now (wait for it instead of reading it twice)."""
        if not self.reuse:
            return False
        _, now = self.best(tokens)
        for slot, pending in reading:
            whole = slot.tokens + pending
            n = common_prefix(whole, tokens, len(tokens) - 1) // self.chunk * self.chunk
            if n - now >= self.chunk:
                return True
        return False

    def _touch(self, slot: Slot) -> None:
        self._clock += 1
        slot.last_used = self._clock
