"""The verifier in a run: which requests it scores, and which head a run uses.

`Verifier` wraps the judge client (judge/client.py takes it as its `VerdictScorer`). For a
request of a step its head was made for that probes `verdict`, it asks the engine for the head's
layers at each verdict slot and names the head in the request (so the head is part of the answer
cache's key); the engine's answer then gets each verdict's P(supported) from the head
(`FieldProbs.score`), which metrics/claims/verdicts.p_yes prefers to the judge's own
probability. Without a head (`head=None`, `localeval verifier fit`) it only reads the layers, and
scores nothing.

`select(settings, judge_sha256)` loads the head file `--verifier HEAD.json` names, refused in one
line when it was made for another judge or other templates. Importing this package hands
`select` to the core (models/backends.plug_head); the core never imports it: `--verifier auto`
and `none` (no head) never load it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.judge.interface import JudgeReply, JudgeRequest, judge_p_yes
from localeval.verifier.head import Head, load_head

if TYPE_CHECKING:
    from localeval.config import Settings

VERDICT = "verdict"


class Verifier:
    """Reads the judge's activations at the verdicts of `steps` and, with a head, scores them."""

    def __init__(self, head: Head | None, *, layers: list[int] | None = None,
                 steps: set[str] | None = None) -> None:
        self.head = head
        self.layers = head.layers if head is not None else list(layers or [])
        self.steps = head.steps if head is not None else set(steps or ())
        self.id = head.id if head is not None else ""

    def applies(self, request: JudgeRequest) -> bool:
        return VERDICT in request.probe_fields and request.step in self.steps

    def prepare(self, request: JudgeRequest) -> JudgeRequest:
        return request.model_copy(update={"hidden_layers": list(self.layers),
                                          "verifier": self.id})

    def scored(self, reply: JudgeReply) -> JudgeReply:
        """The reply with each verdict's `score` from the head (hidden states stay in memory
        for a caller that reads them; they never reach the cache)."""
        if self.head is None:
            return reply
        probs = [fp.model_copy(update={"score": self.head.score(fp.hidden, judge_p_yes(fp))})
                 if fp.field == VERDICT and fp.hidden is not None else fp
                 for fp in reply.field_probs]
        return reply.model_copy(update={"field_probs": probs})


def select(settings: Settings, judge_sha256: str) -> tuple[Verifier, dict[str, Any]]:
    """The run's verifier from the head file `settings.verifier` names, and what summary.json
    says of it."""
    from localeval import prompts

    path = Path(settings.verifier)
    head = load_head(path)
    head.check(judge_sha256, {key: prompts.template_sha256(*key.split("/", 1))
                              for key in head.templates})
    info = {"head": path.name, "id": head.id, "layers": head.layers, "tau": head.tau,
            "steps": sorted(head.steps), "reached": head.reached}
    return Verifier(head), info
