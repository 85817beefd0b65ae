"""What every judge backend implements, and the request/reply records they exchange."""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field


class JudgeRequest(BaseModel):
    """One constrained generation: chat messages in, JSON matching `schema` out."""

    step: str = Field(description="template name, e.g. faithfulness_statements")
    sample_id: str = ""
    messages: list[dict[str, str]]
    answer_schema: str = Field(description="JSON schema the answer must match (becomes a grammar)")
    max_tokens: int
    probe_fields: list[str] = Field(
        default_factory=list,
        description="JSON keys whose value's first token gets its probabilities reported "
                    "(e.g. verdict): JudgeReply.field_probs")
    continuations: list[str] = Field(
        default_factory=list,
        description="prompt-only request: the probability of each of these continuations of "
                    "the prompt (JudgeReply.choice_probs); nothing is generated")

    def probe_key(self) -> list[list[str]]:
        """What the probes add to the cache key (empty for a plain request)."""
        return [self.probe_fields, self.continuations] if (
            self.probe_fields or self.continuations) else []


class FieldProbs(BaseModel):
    """The probabilities of the first token of one JSON value, over what the grammar allows."""

    field: str
    probs: dict[str, float] = Field(description="token text -> probability (most likely first)")


class JudgeReply(BaseModel):
    text: str
    finish_reason: str = Field(description="'stop' or 'length' (max_tokens reached)")
    prompt_tokens: int = 0
    completion_tokens: int = Field(0, description="answer tokens generated, one decode step each")
    forced_tokens: int = Field(0, description="answer tokens read as chunks, not generated: an "
                                              "answer fixed but for a few choices (judge/plan.py)")
    prompt_tokens_processed: int = Field(0, description="prompt tokens not served from a KV prefix")
    decode_s: float = Field(0.0, description="this request's share of the judge's decode "
                                             "calls' seconds (by tokens)")
    cached: bool = False
    field_probs: list[FieldProbs] = Field(default_factory=list)
    choice_probs: dict[str, float] = Field(
        default_factory=dict, description="continuation -> probability (they sum to 1)")


class Judge(Protocol):
    """A backend that answers requests. `fingerprint` identifies the model (its sha256)."""

    name: str
    fingerprint: str

    def sampling_key(self) -> str:
        """The settings that change answers (temperature, seed, ...), for the cache key."""
        ...

    async def complete(self, request: JudgeRequest) -> JudgeReply: ...

    def close(self) -> None: ...
