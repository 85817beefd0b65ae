"""Settings: defaults < config file (TOML) < command-line flags."""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    field_validator,
    model_serializer,
)

from localeval.errors import ConfigError, first_error
from localeval.rubrics import Rubric, load_files

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def default_cache_path() -> Path:
    """$LOCALEVAL_CACHE_DIR, else $XDG_CACHE_HOME/localeval, else ~/.cache/localeval."""
    if explicit := os.environ.get("LOCALEVAL_CACHE_DIR"):
        return Path(explicit) / "judge-cache.sqlite"
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "localeval" / "judge-cache.sqlite"


NO_HEAD = ("auto", "none")
"""`verifier` values that take no head: the judge's own P(supported)."""


class Settings(BaseModel):
    """Everything a run can be told. Each field can be set in a TOML file or by a flag."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    metrics: list[str] | None = Field(
        None, description="metric names; None = every metric the rows can feed"
    )
    profile: Literal["tiny", "small", "standard"] = "small"
    judge: Literal["llama", "fake"] = "llama"
    judge_model: Path | None = Field(None, description="GGUF file; overrides the profile's judge")
    embedder: Path | None = Field(
        None, description="sentence-transformers folder; overrides the profile's"
    )
    fake_answers: Path | None = Field(None, description="JSON list of raw answers for --judge fake")
    language: Literal["auto", "zh", "en"] = "auto"
    n_ctx: int = Field(4096, ge=512)
    n_threads: int | None = Field(None, ge=1)
    n_gpu_layers: int = Field(-1, description="-1 = all layers when llama.cpp has a GPU backend")
    n_batch: int = Field(
        512, ge=64, le=2048,
        description="the longest prompt chunk: tokens of one prompt per decode call (part of "
                    "what makes an answer; see docs/engine.md)")
    parallel: int | None = Field(None, ge=1, le=64, description="judge sequences decoded together")
    max_tokens: int = Field(768, ge=16)
    seed: int = 0
    temperature: float = Field(0.0, ge=0.0)
    cache: Path | None = Field(
        None, description="answer cache (SQLite); default in the user cache dir"
    )
    no_cache: bool = False
    explain: bool = Field(True, description="ask for a short reason with each verdict")
    claims: Literal["sentences", "statements"] = Field(
        "sentences", description="what faithfulness and context_recall judge: each sentence as "
                                 "written, or statements the judge extracts per sentence")
    evidence_passages: bool = Field(
        True, description="judge each claim against the passages of a long material that bear "
                          "on it (metrics/claims/evidence.py), not against the whole material")
    support_threshold: float | None = Field(
        None, ge=0.0, le=1.0,
        description="a claim is supported when the judge's P(supported) reaches it; None = the "
                    "value fitted per language on the dev sets (metrics/claims/verdicts.py)")
    verifier: str = Field(
        "auto", min_length=1,
        description="the learned verifier head that scores support verdicts from the judge's "
                    "activations: a head file (`localeval verifier fit`; the verifier plug-in, "
                    "localeval/verifier/), or auto / none: no head, the judge's own "
                    "P(supported) (no head is packaged, so auto finds none)")
    shield: Literal["meaning", "forms"] = Field(
        "meaning", description="how the shield recognises text aimed at the evaluator: its "
                               "forms and the meaning head over the embedder's vectors "
                               "(metrics/shield_meaning.py), or the forms alone")
    answer_relevance_n: int = Field(3, ge=1, le=10)
    similarity_threshold: float | None = Field(None, ge=-1.0, le=1.0)
    correctness_weights: tuple[float, float] = Field(
        (1.0, 0.0), description="(factual, similarity) weights of answer_correctness"
    )
    retrieval_at: list[Annotated[int, Field(ge=1)]] = Field(
        default_factory=list, description="retrieval cutoffs k (name@k), each 1 or more"
    )
    retrieval_gain: Literal["linear", "exponential"] = Field(
        "linear", description="ndcg gain of grade g: linear g (trec_eval) or exponential 2^g - 1"
    )
    embed_batch_size: int = Field(32, ge=1)
    metric_options: dict[str, dict[str, Any]] = Field(
        default_factory=dict,
        description="metric name → its options ([metric_options.<name>] tables in the config, "
                    "--metric-option name.key=value); checked against each metric's options "
                    "model at run start (models/preflight.check_metric_options)")

    rubrics: list[Rubric] = Field(
        default_factory=list,
        description="rubric metrics: the rubrics of --metrics-file files (`metrics_files` in "
                    "a config file) and of localeval.rubric(...) (localeval/rubrics.py)")

    @model_serializer(mode="wrap")
    def _dump(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        """No metric options → no `metric_options` key, no rubrics → no `rubrics` key:
        run.json, summary.json and a run folder's fingerprint stay what they were before
        metrics had options and rubrics existed."""
        values: dict[str, Any] = handler(self)
        if not self.metric_options:
            values.pop("metric_options", None)
        if not self.rubrics:
            values.pop("rubrics", None)
        return values

    @field_validator("correctness_weights")
    @classmethod
    def _weights(cls, v: tuple[float, float]) -> tuple[float, float]:
        if not all(math.isfinite(w) and w >= 0 for w in v) or sum(v) == 0:
            raise ValueError("must be two non-negative numbers, not both 0, e.g. [0.75, 0.25]")
        return v

    def names_head(self) -> bool:
        """Whether `verifier` names a head file (the verifier plug-in scores the verdicts)."""
        return self.verifier not in NO_HEAD

    def cache_path(self) -> Path | None:
        if self.no_cache:
            return None
        return self.cache or default_cache_path()


def option_value(text: str) -> Any:
    """A --metric-option value as TOML reads it (60, 0.5, true, [1, 2], "x"), else the text."""
    try:
        return tomllib.loads(f"v = {text}")["v"]
    except tomllib.TOMLDecodeError:
        return text


def load_config(path: Path | None, overrides: dict[str, Any]) -> Settings:
    """Read a TOML file (top level or a [localeval] table) then apply non-None overrides."""
    values: dict[str, Any] = {}
    if path is not None:
        if Path(path).exists() and not Path(path).is_file() and not Path(path).is_dir():
            raise ConfigError(f"--config {path} is not a regular file (a FIFO or device); "
                              "give a TOML file")
        try:
            data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise ConfigError(f"config file {path} not found") from None
        except IsADirectoryError:
            raise ConfigError(f"--config {path} is a folder; give a TOML file") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise ConfigError(f"config file {path}: {exc}") from None
        except RecursionError:
            raise ConfigError(f"config file {path}: nested too deeply to read") from None
        except OSError as exc:
            raise ConfigError(f"config file {path}: {exc.strerror or exc}") from None
        values.update(data.get("localeval", data))
    overrides = {k: v for k, v in overrides.items() if v is not None}
    if isinstance(overrides.get("metric_options"), dict) and isinstance(
            values.get("metric_options"), dict):  # a flag replaces one option, not the table
        merged = {k: dict(v) if isinstance(v, dict) else v
                  for k, v in values["metric_options"].items()}
        for name, options in overrides["metric_options"].items():
            before = merged.get(name)
            merged[name] = {**(before if isinstance(before, dict) else {}), **options}
        overrides["metric_options"] = merged
    values.update(overrides)
    files = values.pop("metrics_files", None)
    if files:  # a config file's paths are relative to it
        base = Path(path).parent if path is not None and "metrics_files" not in overrides else None
        if isinstance(files, (str, Path)):
            files = [files]
        if not isinstance(files, list):
            raise ConfigError(f"setting 'metrics_files': a list of TOML files, got {files!r}")
        loaded = load_files(base / f if base is not None else Path(f) for f in files)
        values["rubrics"] = [*(values.get("rubrics") or []), *loaded]
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        loc, msg = first_error(exc)
        where = f" (in {path})" if path else ""
        raise ConfigError(f"setting {loc!r}{where}: {msg}") from None
