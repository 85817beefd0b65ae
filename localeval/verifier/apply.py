"""The verifier in a run: which requests it scores, and which head a run uses.

`Verifier` sits in the judge client (judge/client.py). For a request of a step its head was made
for that probes `verdict`, it asks the engine for the head's layers at each verdict slot and
names the head in the request (so the head is part of the answer cache's key); the engine's
answer then gets each verdict's P(supported) from the head (`FieldProbs.score`), which
metrics/support/verdicts.p_yes prefers to the judge's own probability. Without a head
(`head=None`, `localeval verifier fit`) it only reads the layers, and scores nothing.

`select(settings, judge_sha256)` picks the head: `--verifier auto` (the default) takes the
packaged head made for the judge in use (localeval/verifier/heads/) when it was adopted (it beat
the judge's raw P out of dataset: `Head.adopted`); `none` takes none (the judge's own
P(supported), as before heads existed); the name of a packaged head (its file name without
.json) or a path takes that head, refused in one line when it was made for another judge or
other templates. `heads_sha256` is what the run's fingerprint holds of the choice.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.judge.interface import FieldProbs, JudgeReply, JudgeRequest
from localeval.verifier.head import Head, load_head

if TYPE_CHECKING:
    from localeval.config import Settings

HEADS = Path(__file__).with_name("heads")
"""Heads shipped with the package, one JSON file per judge they were made for."""
VERDICT = "verdict"


def raw_p(entry: FieldProbs) -> float | None:
    """The judge's own P(verdict = 1), renormalised over the two verdicts."""
    yes, no = entry.probs.get("1", 0.0), entry.probs.get("0", 0.0)
    return yes / (yes + no) if yes + no > 0 else None


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
        probs = [fp.model_copy(update={"score": self.head.score(fp.hidden, raw_p(fp))})
                 if fp.field == VERDICT and fp.hidden is not None else fp
                 for fp in reply.field_probs]
        return reply.model_copy(update={"field_probs": probs})


def adopted_heads() -> list[Path]:
    """The shipped heads `--verifier auto` may take (adopted as their judge's default)."""
    return [p for p in sorted(HEADS.glob("*.json")) if load_head(p).adopted]


def packaged_head(judge_sha256: str) -> Path | None:
    """The shipped head made for this judge and adopted as its default, if there is one."""
    for path in sorted(HEADS.glob("*.json")):
        head = load_head(path)
        if head.adopted and head.judge_sha256 == judge_sha256:
            return path
    return None


def heads_sha256(choice: str | None) -> str | None:
    """The bytes of the heads a `--verifier` choice may take, hashed for the run's fingerprint
    (run.json): the head named, or with `auto` every adopted packaged head; None with `none`, or
    when a head cannot be read. A head changed under the same name changes the fingerprint."""
    if not choice or choice == "none":
        return None
    paths = adopted_heads() if choice == "auto" else [head_path(choice)]
    digest = hashlib.sha256()
    for path in paths:
        try:
            digest.update(path.read_bytes())
        except OSError:
            return None
    return digest.hexdigest()


def head_path(choice: str) -> Path:
    """A packaged head's name, or a path."""
    named = HEADS / f"{choice}.json"
    return named if "/" not in choice and named.is_file() else Path(choice)


def select(settings: Settings, judge_sha256: str) -> tuple[Verifier | None, dict[str, Any]]:
    """The run's verifier and what summary.json says of it."""
    from localeval import prompts

    choice = settings.verifier
    if choice == "none":
        return None, {"head": "none: raw P(supported)", "reason": "--verifier none"}
    path = packaged_head(judge_sha256) if choice == "auto" else head_path(choice)
    if path is None:
        return None, {"head": "none: raw P(supported)",
                      "reason": "no adopted packaged head for this judge"}
    head = load_head(path)
    head.check(judge_sha256, {key: prompts.template_sha256(*key.split("/", 1))
                              for key in head.templates})
    info = {"head": path.name, "id": head.id, "layers": head.layers, "tau": head.tau,
            "steps": sorted(head.steps), "reached": head.reached}
    return Verifier(head), info
