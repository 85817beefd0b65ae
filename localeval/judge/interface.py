"""The judge's interface: the request a metric sends, the reply it gets, what every judge
implements (the llama.cpp judge in judge/llamacpp/__init__.py, the fake one in judge/fake.py),
and what a scorer of verdicts wrapped around the judge client implements (the verifier plug-in)."""

from __future__ import annotations

from typing import Any, Protocol

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
    hidden_layers: list[int] = Field(
        default_factory=list,
        description="residual-stream layers to read at each probed slot (FieldProbs.hidden), "
                    "for a learned verifier; -1 is the final normed state")
    verifier: str = Field("", description="the learned verifier head (its id) that scores the "
                                          "probed verdicts (FieldProbs.score)")


class FieldProbs(BaseModel):
    """The probabilities of the first token of one JSON value, over what the grammar allows;
    with a learned verifier, its P(supported) (`score`) from the judge's activations there."""

    field: str
    probs: dict[str, float] = Field(description="token text -> probability (most likely first)")
    score: float | None = Field(None, description="the verifier head's P(supported), when one "
                                                  "scored this verdict")
    hidden: Any = Field(None, exclude=True, description="the tapped layers' states here (a "
                                                        "numpy row; in memory only, never cached)")


def judge_p_yes(entry: FieldProbs) -> float | None:
    """The judge's own P(verdict = 1) (for a claim, P(supported)), renormalised over the two
    verdicts; metrics/claims/verdicts.p_yes is the one a run uses (a verifier head's first)."""
    yes, no = entry.probs.get("1", 0.0), entry.probs.get("0", 0.0)
    return yes / (yes + no) if yes + no > 0 else None


def field_p_yes(fields: list[FieldProbs], name: str) -> float | None:
    """`judge_p_yes` of the probed field `name` (None: not probed, or no probability)."""
    entry = next((f for f in fields if f.field == name), None)
    return judge_p_yes(entry) if entry is not None else None


class JudgeReply(BaseModel):
    text: str
    finish_reason: str = Field(description="'stop' or 'length' (max_tokens reached)")
    prompt_tokens: int = 0
    completion_tokens: int = Field(0, description="answer tokens generated, one decode step each")
    forced_tokens: int = Field(0, description="answer tokens read as chunks, not generated: an "
                                              "answer fixed but for a few choices "
                                              "(judge/llamacpp/plan.py)")
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


class VerdictScorer(Protocol):
    """Scores the verdicts of some steps from the judge's activations (localeval/verifier, a
    plug-in): the client lets it add to a request what the engine must read (which enters the
    cache key) and has it score the reply before the cache stores it."""

    layers: list[int]
    head: Any
    """What scored the verdicts (its `steps` and `tau` are read by metrics/claims/verdicts)."""

    def applies(self, request: JudgeRequest) -> bool: ...

    def prepare(self, request: JudgeRequest) -> JudgeRequest: ...

    def scored(self, reply: JudgeReply) -> JudgeReply: ...
