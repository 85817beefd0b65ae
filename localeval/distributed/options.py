"""The `--ray` options of a run (`localeval run --ray [ADDRESS]`, `evaluate(ray=...)`): the flags
are declared in cli/parser.py and read by cli/run.py.

Importing this module does not import Ray: `--help` and local runs work without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localeval.errors import ConfigError, first_error

LOCAL = "local"
# The Ray localeval is tested with (pyproject's floor); token authentication
# (RAY_AUTH_MODE=token, which docs/ray.md has every cluster use) came in Ray 2.52.
RAY_MIN = (2, 60)


def check_ray_version(version: str, where: str = "this machine") -> None:
    """Refuse a Ray older than RAY_MIN (or one whose version cannot be read)."""
    parts = []
    for piece in str(version).split(".")[:2]:
        digits = "".join(c for c in piece if c.isdigit()) if piece[:1].isdigit() else ""
        parts.append(int(digits) if digits else -1)
    if len(parts) < 2 or tuple(parts) < RAY_MIN:
        floor = ".".join(map(str, RAY_MIN))
        raise ConfigError(
            f"ray: {where} has Ray {str(version)[:40]!r}; localeval needs Ray >= {floor} "
            f"(the version tested): pip install 'ray>={floor}' on every node"
        )


class RayOptions(BaseModel):
    """Where the Ray workers run and how many there are."""

    model_config = ConfigDict(extra="forbid")

    address: str = Field(
        LOCAL,
        description="'local': start a Ray instance on this machine (or use the one this process "
        "already joined); 'auto': the cluster this machine belongs to; else HOST:PORT or "
        "ray://HOST:PORT",
    )
    workers: int | None = Field(
        None, ge=1, description="workers in all; default one per GPU, else CPUs // cpus_per_worker"
    )
    cpus_per_worker: int | None = Field(
        None, ge=1, description="CPUs (llama.cpp threads) of a CPU worker; default 4, or all"
    )
    gpus: bool | None = Field(
        None, description="one GPU per worker; default: when the cluster has GPUs and "
        "n_gpu_layers != 0"
    )
    models_dir: Path | None = Field(
        None, description="where the workers find the model files (e.g. a shared filesystem); "
        "default: each worker's own models/ folder"
    )
    start_timeout_s: float = Field(
        900.0, gt=0, description="how long to wait for every worker to start and load"
    )

    @classmethod
    def coerce(cls, value: Any) -> RayOptions:
        """True → a local instance; a string → that address; a dict or RayOptions → as given."""
        if isinstance(value, RayOptions):
            return value
        try:
            if value is True:
                return cls()
            if isinstance(value, str):
                return cls(address=value.strip() or LOCAL)
            if isinstance(value, dict):
                return cls.model_validate(value)
        except ValidationError as exc:
            loc, msg = first_error(exc)
            raise ConfigError(f"ray option {loc!r}: {msg}") from None
        raise ConfigError(
            "ray= must be True, an address ('auto', 'HOST:PORT'), a dict or RayOptions"
        )
