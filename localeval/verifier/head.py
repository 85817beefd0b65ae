"""A learned verifier head: the file, its checks, and P(supported) from the judge's activations.

A head is a logistic regression over the judge's residual stream at the verdict position (the
token before the verdict digit) of a few layers, each standardised, plus the logit of the judge's
own P(supported). It is one JSON file of a few hundred KB: the weights and the standardisation
(float32, base64), the layers, τ per language, the judge's sha256, the sha256 of every template
it was trained with, the training data's hashes and the figures it reached. It applies only to
the judge and templates it was made for: `Head.check` refuses any other in one line.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import BaseModel, Field, ValidationError, field_validator, model_validator

from localeval.errors import ConfigError, first_error

FORMAT = "localeval-verifier/1"
_EPS = 1e-6


def _pack(a: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(a, dtype="<f4").tobytes()).decode("ascii")


def _unpack(s: str) -> np.ndarray:
    return np.frombuffer(base64.b64decode(s, validate=True), dtype="<f4").astype(np.float64)


class Head(BaseModel):
    """The head file's content (see the module doc)."""

    format: str = FORMAT
    judge_sha256: str = Field(description="the judge GGUF the activations come from")
    templates: dict[str, str] = Field(
        description="'<lang>/<step>' -> sha256 of every verdict template it was trained with")
    layers: list[int] = Field(description="residual-stream layers read (-1: the final normed "
                                          "state), in the order of the weights")
    n_embd: int
    with_p: bool = Field(True, description="the judge's logit(P(supported)) is a feature too")
    mean: str = Field(description="per feature mean (base64 float32)")
    scale: str = Field(description="per feature standard deviation (base64 float32)")
    weights: str = Field(description="logistic-regression weights (base64 float32)")
    bias: float
    tau: dict[str, float] = Field(description="P(supported) a claim needs, per language")
    adopted: bool = Field(False, description="whether the head beat the judge's raw P out of "
                                             "dataset when it was made (part of its id)")
    trained_on: dict[str, Any] = Field(default_factory=dict,
                                       description="training data: files, sha256, counts")
    reached: dict[str, Any] = Field(default_factory=dict,
                                    description="the figures it reached when it was made")

    @field_validator("format")
    @classmethod
    def _known(cls, v: str) -> str:
        if v != FORMAT:
            raise ValueError(f"unknown head format {v!r} (this localeval reads {FORMAT})")
        return v

    @field_validator("tau")
    @classmethod
    def _thresholds(cls, v: dict[str, float]) -> dict[str, float]:
        bad = {k: t for k, t in v.items() if not (math.isfinite(t) and 0.0 <= t <= 1.0)}
        if bad:
            raise ValueError(f"τ must be a number in [0, 1], not {bad}")
        return v

    @model_validator(mode="after")
    def _arrays_fit(self) -> Head:
        """The three arrays decode, hold finite numbers and are of one length; the bias too."""
        if not math.isfinite(self.bias):
            raise ValueError("bias must be a finite number")
        try:
            arrays = [_unpack(a) for a in (self.mean, self.scale, self.weights)]
        except ValueError as exc:  # binascii.Error, or a length that is no float32 array
            raise ValueError(f"mean, scale and weights must be base64 float32 ({exc})") from None
        if len({a.shape for a in arrays}) != 1 or not all(np.isfinite(a).all() for a in arrays):
            raise ValueError("mean, scale and weights must be finite and of one length")
        if any(n < -1 for n in self.layers) or len(set(self.layers)) != len(self.layers):
            raise ValueError(f"layers are -1 (the final state) or a layer number, each once, "
                             f"not {self.layers}")
        if self.n_embd < 1:
            raise ValueError(f"n_embd must be at least 1, not {self.n_embd}")
        want = len(self.layers) * self.n_embd + int(self.with_p)
        if arrays[0].shape[0] != want:
            raise ValueError(
                f"the arrays hold {arrays[0].shape[0]} features; {len(self.layers)} layers of "
                f"n_embd {self.n_embd} make {want}" + (" with logit(P)" if self.with_p else ""))
        return self

    # ---------------------------------------------------------------- identity

    @property
    def id(self) -> str:
        """sha256 of the file's canonical JSON: part of the cache key and the run fingerprint."""
        return hashlib.sha256(self.canonical().encode("utf-8")).hexdigest()

    def canonical(self) -> str:
        return json.dumps(self.model_dump(), ensure_ascii=False, sort_keys=True)

    @property
    def steps(self) -> set[str]:
        return {key.split("/", 1)[1] for key in self.templates}

    # ---------------------------------------------------------------- scoring

    def _arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        cached = self.__dict__.get("_arrays_cache")
        if cached is None:
            cached = (_unpack(self.mean), _unpack(self.scale), _unpack(self.weights))
            self.__dict__["_arrays_cache"] = cached
        return cached

    def features(self, hidden: np.ndarray, p: float | None) -> np.ndarray:
        """The raw feature vector: the layers' states in order, then logit(P) when used."""
        x = np.asarray(hidden, dtype=np.float64).reshape(-1)
        if self.with_p:
            q = min(max(0.5 if p is None else p, _EPS), 1 - _EPS)
            x = np.append(x, math.log(q / (1 - q)))
        return x

    def logit(self, x: np.ndarray) -> float:
        mean, scale, w = self._arrays()
        if x.shape != mean.shape:
            raise ValueError(f"{x.shape[0]} features for a head of {mean.shape[0]}")
        return float(((x - mean) / scale) @ w + self.bias)

    def score(self, hidden: np.ndarray, p: float | None) -> float:
        """P(supported) by the head, rounded to 6 places (stored in the answer cache)."""
        z = self.logit(self.features(hidden, p))
        return round(1.0 / (1.0 + math.exp(-max(min(z, 60.0), -60.0))), 6)

    # ---------------------------------------------------------------- checks

    def check(self, judge_sha256: str, template_sha: dict[str, str]) -> None:
        """Refuse a head made for another judge or other templates (one line)."""
        if self.judge_sha256 != judge_sha256:
            raise ConfigError(f"the verifier head was made for judge {self.judge_sha256[:12]}, "
                              f"not the judge in use ({judge_sha256[:12]}); fit one with "
                              "`localeval verifier fit` or run with --verifier none")
        changed = sorted(k for k, v in self.templates.items() if template_sha.get(k) != v)
        if changed:
            raise ConfigError(f"the verifier head was made with other templates "
                              f"({', '.join(changed)} changed); fit it again with `localeval "
                              "verifier fit` or run with --verifier none")

    @classmethod
    def build(cls, *, mean: np.ndarray, scale: np.ndarray, weights: np.ndarray,
              **fields: Any) -> Head:
        return cls(mean=_pack(mean), scale=_pack(np.maximum(scale, _EPS)),
                   weights=_pack(weights), **fields)


def load_head(path: Path) -> Head:
    """Read a head file; a missing, unreadable or malformed one is one line."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"verifier head {path} not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"verifier head {path} cannot be read: {exc}") from None
    try:
        return Head.model_validate_json(text)
    except ValidationError as exc:
        loc, msg = first_error(exc, "top level")
        raise ConfigError(f"verifier head {path} is not a head file ({msg} at {loc})") from None


def save_head(head: Head, path: Path) -> None:
    """Write atomically: a head is never half-written."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(head.model_dump(), ensure_ascii=False, indent=1) + "\n",
                   encoding="utf-8")
    tmp.replace(path)
