"""Judges for the Ray tests and benchmark: each answer is a function of the request (never of
the order requests arrive in, which differs between workers), after a fixed delay."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import signal
from pathlib import Path

from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest


class ContentJudge:
    """Waits `delay` seconds per request; faithfulness answers derived from the request."""

    name = "content"
    fingerprint = "content-v1"

    def __init__(self, delay: float = 0.02) -> None:
        self.delay = delay

    def sampling_key(self) -> str:
        return "content"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        await asyncio.sleep(self.delay)
        digest = hashlib.sha256(json.dumps(request.messages).encode()).digest()
        if request.step == "faithfulness_statements":
            answer: dict[str, object] = {
                "statements": [f"claim {i} {digest[i]:02x}" for i in range(1 + digest[0] % 3)]
            }
        elif request.step == "faithfulness_verdicts":
            n = json.loads(request.answer_schema)["properties"]["verdicts"]["minItems"]
            answer = {"verdicts": [{"reason": f"r{digest[i]}", "verdict": digest[i] % 2}
                                   for i in range(n)]}
        else:
            raise AssertionError(f"unexpected step {request.step}")
        text = json.dumps(answer)
        return JudgeReply(text=text, finish_reason="stop", prompt_tokens=100,
                          prompt_tokens_processed=100, completion_tokens=len(text) // 4)

    def close(self) -> None:
        pass


class KillerJudge(ContentJudge):
    """A ContentJudge whose worker process SIGKILLs itself at its `after`-th request — in one
    worker only: the first to create `marker`."""

    def __init__(self, marker: Path, after: int = 3, delay: float = 0.02) -> None:
        super().__init__(delay)
        self.marker, self.after, self.seen = str(marker), after, 0

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.seen += 1
        if self.seen == self.after:
            try:
                os.close(os.open(self.marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY))
            except FileExistsError:
                pass
            else:
                Path(self.marker).write_text(str(os.getpid()))
                os.kill(os.getpid(), signal.SIGKILL)
        return await super().complete(request)


class RubricJudge:
    """Answers every rubric request from its content (never from the order requests come in):
    a probability per level (a level request's digits, or the schema's enum) from a hash of the
    messages; a reason's request gets "because", a drafting request two steps."""

    name = "rubric-judge"
    fingerprint = "rubric-judge-v1"

    def __init__(self) -> None:
        self.requests: list[JudgeRequest] = []

    def sampling_key(self) -> str:
        return "rubric"

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        props = json.loads(request.answer_schema)["properties"]
        tokens = sum(len(m["content"]) for m in request.messages) // 4
        if "steps" in props:
            return JudgeReply(text=json.dumps({"steps": ["Read the answer.", "Grade it."]}),
                              finish_reason="stop", prompt_tokens=tokens)
        if list(props) == ["reason"]:  # the reason's request, after the level
            return JudgeReply(text=json.dumps({"reason": "because"}), finish_reason="stop",
                              prompt_tokens=tokens)
        digest = hashlib.sha256(json.dumps(request.messages).encode()).digest()
        if request.continuations:  # the level's request: a probability per digit
            weights = [1 + digest[i] for i in range(len(request.continuations))]
            return JudgeReply(text="", finish_reason="stop", prompt_tokens=tokens,
                              choice_probs={c: w / sum(weights) for c, w in zip(
                                  request.continuations, weights, strict=True)})
        field = next(k for k in props if k != "reason")
        values = props[field]["enum"]
        weights = [1 + digest[i] for i in range(len(values))]
        best = max(range(len(values)), key=lambda i: weights[i])
        answer = {"reason": "because"} if "reason" in props else {}
        answer[field] = values[best]
        probs = {str(v): w / sum(weights) for v, w in zip(values, weights, strict=True)}
        return JudgeReply(text=json.dumps(answer), finish_reason="stop", prompt_tokens=tokens,
                          field_probs=[FieldProbs(field=field, probs=probs)])

    def close(self) -> None:
        pass
