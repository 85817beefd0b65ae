"""The shield's second detector: a sentence aimed at the evaluator recognised by what it means,
not by how it is worded (metrics/shield.py's forms are the first).

A logistic head over the embedder's sentence vectors (`shield_head.json`, fitted by
scripts/provenance/fit_shield_head.py on research/notes_dev.tsv and sentences of
../shared/data/train) gives each sentence of the material P(aimed at the evaluator); a
sentence at or above the head's τ is flagged, as a sentence matching a form is, and the shield
scores the sample the worse of the two ways. What it catches and what it flags by mistake, on
notes it was never fitted on: research/shield_meaning.md and localeval/docs/metrics.md.

The head is fitted on one embedder's vectors (`embedder`, its manifest sha256): it applies when
the run's embedder is that one, and a run with another embedder, or none, is shielded by the
forms alone (`Settings.shield`; summary.json says which). Vectors come from the run's
EmbeddingStore, encoded with fixed shapes, so a sentence's P does not depend on the texts beside
it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from localeval.errors import ModelError

if TYPE_CHECKING:
    import numpy as np

    from localeval.config import Settings
    from localeval.models.backends import Backends
    from localeval.models.embed import EmbeddingStore

HEAD_FILE = Path(__file__).with_name("shield_head.json")


@dataclass(frozen=True)
class Head:
    """The fitted head: P = σ(w·v + b) of a unit sentence vector v, flagged at P ≥ τ."""

    embedder: str
    """The manifest sha256 of the embedder whose vectors it was fitted on."""
    weights: np.ndarray
    bias: float
    tau: float
    sha256: str
    """Of the head file's bytes: part of the run's fingerprint."""

    def p(self, vectors: np.ndarray) -> list[float]:
        """P(aimed at the evaluator) of each row."""
        import numpy as np

        z = vectors @ self.weights + self.bias
        return [float(p) for p in 0.5 * (1.0 + np.tanh(0.5 * z))]  # σ(z), without overflow


@lru_cache(maxsize=1)
def head() -> Head:
    """The packaged head (read once)."""
    import numpy as np

    try:
        raw = HEAD_FILE.read_bytes()
        data = json.loads(raw)
        return Head(embedder=str(data["embedder"]),
                    weights=np.asarray(data["weights"], dtype=np.float64),
                    bias=float(data["bias"]), tau=float(data["tau"]),
                    sha256=hashlib.sha256(raw).hexdigest())
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ModelError(f"the shield's head {HEAD_FILE} cannot be read ({exc}): reinstall "
                         "localeval, or run with --shield forms") from None


@lru_cache(maxsize=1)
def head_sha256() -> str:
    """Of the packaged head file's bytes."""
    try:
        return hashlib.sha256(HEAD_FILE.read_bytes()).hexdigest()
    except OSError:
        return head().sha256  # raises the one clear error


def applies(store: EmbeddingStore | None) -> bool:
    """Whether the head reads this store's vectors: the embedder it was fitted on."""
    return store is not None and store.embedder.fingerprint == head().embedder


def note_in(backends: Backends, settings: Settings) -> None:
    """Write the shield's detectors into what summary.json says of the models (a run that
    asks the judge)."""
    if backends.judge is not None:
        backends.info["shield"] = describe(settings, backends.embeddings)


def describe(settings: Settings, store: EmbeddingStore | None) -> dict[str, Any]:
    """What summary.json's models say of the shield: its detectors, and why the head is not
    one of them when it is not."""
    if settings.shield != "meaning":
        return {"detectors": ["forms"], "why": "--shield forms"}
    if not applies(store):
        name = store.embedder.name if store is not None else "none"
        return {"detectors": ["forms"],
                "why": f"the meaning head reads the vectors of another embedder than this "
                       f"run's ({name})"}
    h = head()
    return {"detectors": ["forms", "meaning"], "head_sha256": h.sha256, "tau": h.tau}


async def aimed(store: EmbeddingStore, sentences: list[str]) -> dict[str, float]:
    """The sentences the head flags, with their P."""
    if not sentences:
        return {}
    distinct = list(dict.fromkeys(sentences))
    h = head()
    p = h.p((await store.vectors(distinct)).astype("float64"))
    return {s: round(q, 4) for s, q in zip(distinct, p, strict=True) if q >= h.tau}
