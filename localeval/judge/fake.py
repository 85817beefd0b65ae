"""A judge for tests: returns queued raw answers and records every request it saw."""

from __future__ import annotations

import json
import os
from collections import deque
from collections.abc import Iterable, Mapping
from pathlib import Path

from localeval.errors import ConfigError, JudgeError
from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest

Queued = tuple[str, list[FieldProbs]]

ALLOW_ENV = "LOCALEVAL_ALLOW_FAKE_JUDGE"
"""Set to 1 by localeval's own test suite (tests/conftest.py). Without it `judge = "fake"` is
refused, and a gate fails on any run whose judge was the fake one: canned answers must never pass
a user's CI."""


def allowed() -> bool:
    return os.environ.get(ALLOW_ENV) == "1"


def refuse_unless_allowed() -> None:
    if not allowed():
        raise ConfigError(
            'judge = "fake" (canned answers) is for localeval\'s own tests and is refused here; '
            'use judge = "llama" (the default) — a config file or --judge fake cannot select it'
        )


class FakeJudge:
    """Answers come from a FIFO queue, or one queue per step when given a mapping.

    The raw strings go through the real parsing path, so malformed answers can be tested.
    A dict answer may carry `"_probs": [[field, {value: probability}], ...]`: the field
    probabilities an engine would report (e.g. P(verdict)), left out of the text. A prompt-only
    request (continuations) takes the continuation chosen (`"3"`) or `{"_choices": {...}}`.
    Running out of answers is an error, never a default answer.
    """

    name = "fake"
    fingerprint = "fake"

    def __init__(self, answers: Iterable[str | dict] | Mapping[str, Iterable[str | dict]]) -> None:
        def as_text(a: str | dict) -> Queued:
            if isinstance(a, str):
                return a, []
            a = dict(a)
            probs = [FieldProbs(field=f, probs=p) for f, p in a.pop("_probs", [])]
            return json.dumps(a, ensure_ascii=False), probs

        if isinstance(answers, Mapping):
            self._by_step = {k: deque(as_text(a) for a in v) for k, v in answers.items()}
            self._queue: deque[Queued] | None = None
        else:
            self._by_step = {}
            self._queue = deque(as_text(a) for a in answers)
        self.requests: list[JudgeRequest] = []

    @classmethod
    def from_file(cls, path: Path) -> FakeJudge:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ConfigError(f"fake answers file {path}: {exc}") from None
        if not isinstance(data, (list, dict)):
            raise ConfigError(f"fake answers file {path}: expected a JSON list or object")
        return cls(data)

    def sampling_key(self) -> str:
        return "fake"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        queue = self._queue if self._queue is not None else self._by_step.get(request.step)
        if not queue:
            raise JudgeError(f"fake judge has no queued answer left for step {request.step!r}")
        text, probs = queue.popleft()
        words = sum(len(m["content"]) for m in request.messages) // 4
        if request.continuations:
            return JudgeReply(text="", finish_reason="stop", prompt_tokens=words,
                              prompt_tokens_processed=words,
                              choice_probs=self._choices(request, text))
        return JudgeReply(text=text, finish_reason="stop", prompt_tokens=words,
                          prompt_tokens_processed=words, completion_tokens=len(text) // 4,
                          field_probs=probs)

    @staticmethod
    def _choices(request: JudgeRequest, text: str) -> dict[str, float]:
        """A prompt-only request's answer: the queued continuation (`"3"` or `3`: probability
        1), or `{"_choices": {continuation: probability, ...}}`."""
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        if isinstance(value, dict) and isinstance(value.get("_choices"), dict):
            return {c: float(value["_choices"].get(c, 0.0)) for c in request.continuations}
        if str(value) in request.continuations:
            return {c: float(c == str(value)) for c in request.continuations}
        raise JudgeError(f"fake judge: the queued answer {text[:60]!r} for step "
                         f"{request.step!r} is none of its continuations "
                         f"({', '.join(request.continuations)})")

    def close(self) -> None:
        pass
