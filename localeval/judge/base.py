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


class JudgeReply(BaseModel):
    text: str
    finish_reason: str = Field(description="'stop' or 'length' (max_tokens reached)")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    prompt_tokens_processed: int = Field(0, description="prompt tokens not served from a KV prefix")
    cached: bool = False


class Judge(Protocol):
    """A backend that answers requests. `fingerprint` identifies the model (its sha256)."""

    name: str
    fingerprint: str

    def sampling_key(self) -> str:
        """The settings that change answers (temperature, seed, ...), for the cache key."""
        ...

    async def complete(self, request: JudgeRequest) -> JudgeReply: ...

    def close(self) -> None: ...
