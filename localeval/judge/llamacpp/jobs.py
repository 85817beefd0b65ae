"""A judge request inside the engine: queued (`Job`), then running in a slot (`Active`): what it
still has to read, what it generated or read of its answer, its samplers and its share of the
decode time (the figures its JudgeReply reports)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest
from localeval.judge.llamacpp.plan import Reading
from localeval.judge.llamacpp.prefix_pool import Slot


@dataclass
class Job:
    request: JudgeRequest
    future: asyncio.Future[JudgeReply]
    loop: asyncio.AbstractEventLoop
    order: int = 0
    tokens: list[int] | None = None
    cuts: list[int] = field(default_factory=list)


@dataclass
class Active:
    """A request in a slot: what is left to read, what it generated, its samplers."""

    job: Job
    slot: Slot
    pending: list[int]  # prompt tokens not yet decoded
    n_prompt: int
    n_reused: int
    grammar: Any = None
    chain: Any = None
    generated: list[int] = field(default_factory=list)
    text: bytearray = field(default_factory=bytearray)
    field_probs: list[FieldProbs] = field(default_factory=list)
    probe_at: int = -1  # where the key of the last recorded field starts in the text
    conts: list[list[int]] = field(default_factory=list)  # continuations still to score
    logprobs: dict[str, float] = field(default_factory=dict)
    first_logp: np.ndarray | None = None
    plan: Reading | None = None  # its answer laid out by the schema (judge/llamacpp/plan.py)
    forced: int = 0  # answer tokens read as chunks
    hidden: list[np.ndarray] = field(default_factory=list)  # per planned choice: tapped layers
    seconds: float = 0.0  # its share of the decode calls' time

    @property
    def order(self) -> int:
        return self.job.order

    @property
    def reading(self) -> bool:
        return bool(self.pending) or bool(self.conts) or (
            self.plan is not None and self.plan.reading)
