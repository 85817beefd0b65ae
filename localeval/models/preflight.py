"""Checks made before any model loads, so that a wrong path or setting costs a second, not a
model load followed by an error (or worse, one error per sample).

The settings' own values (ranges, cutoffs, weights) are validated by `config.Settings`; here
are the metrics' options, checked first against each metric's options model
(`check_metric_options`), then the checks that need the file system: the model files (a manifest
model whose size or sha256 no longer matches is refused here), the fake judge's answers, the
embedder folder.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from localeval.config import Settings
from localeval.errors import ConfigError, ModelError, first_error
from localeval.names import did_you_mean

GGUF_MAGIC = b"GGUF"


def check_before_loading(
    settings: Settings, metrics: Sequence[Any], *, judge: Any = None, embedder: Any = None
) -> None:
    """Raise a LocalevalError (one line) for anything the run would trip over after loading.

    `metrics` are the metrics that will run; `judge`/`embedder` are ready objects, if given
    (they need no file). Paths given by the user are checked first, then the manifest's models. (An unusable answer cache is no error: the run warns and goes
    on without it.)
    """
    check_metric_options(settings)  # first: no file is needed to check them
    needs_judge = any(m.uses_judge for m in metrics) and judge is None
    needs_embedder = any(m.needs_embedder(settings) for m in metrics) and embedder is None
    if needs_judge:
        _check_user_judge(settings)
    if needs_embedder and settings.embedder is not None and not Path(settings.embedder).is_dir():
        raise ModelError(f"--embedder {settings.embedder} is not a folder; give a "
                         "sentence-transformers model folder")
    if needs_judge and settings.judge == "llama" and settings.judge_model is None:
        from localeval import models

        manifest = models.load_manifest()
        models.require(manifest.get(manifest.profile(settings.profile)["judge"]))
    if needs_embedder and settings.embedder is None and settings.judge != "fake":
        _check_profile_embedder(settings)  # (the fake judge runs with the hash embedder)


def check_metric_options(settings: Settings) -> None:
    """Raise a ConfigError (one line naming the metric and the option) for options of an
    unknown metric, of one without options, or that its options model refuses."""
    from localeval.metrics import REGISTRY

    for name, values in settings.metric_options.items():
        m = REGISTRY.get(name)
        where = f"[metric_options.{name}]"
        if m is None:
            raise ConfigError(f"{where}: unknown metric {name!r}"
                              f"{did_you_mean(name, list(REGISTRY))}")
        if m.options is None:
            raise ConfigError(f"{where}: metric {name} takes no options (given: "
                              f"{', '.join(sorted(values))})")
        fields = m.options.model_fields
        for key in values:
            if key not in fields:
                raise ConfigError(f"{where}: metric {name} has no option {key!r}"
                                  f"{did_you_mean(key, list(fields))} (its options: "
                                  f"{', '.join(fields)})")
        try:
            m.options.model_validate(values)
        except ValidationError as exc:
            key, msg = first_error(exc)
            raise ConfigError(f"{where}: metric {name} option {key!r}: {msg}") from None


def check_fake_judge(settings: Settings) -> None:
    """The one guard of `judge = "fake"`: refused outside localeval's own tests, and it needs its
    answers file. Made here before loading, and by models/backends.py when it builds the judge."""
    from localeval.judge.fake import refuse_unless_allowed

    refuse_unless_allowed()
    if settings.fake_answers is None:
        raise ConfigError("--judge fake needs --fake-answers FILE (a JSON list of raw answers)")
    if not Path(settings.fake_answers).is_file():
        raise ConfigError(f"--fake-answers {settings.fake_answers} not found")


def _check_user_judge(settings: Settings) -> None:
    if settings.judge == "fake":
        check_fake_judge(settings)
    elif settings.judge_model is not None:
        path = Path(settings.judge_model)
        if not path.is_file():
            raise ModelError(f"--judge-model {path} not found; give an existing GGUF file")
        try:
            with open(path, "rb") as f:
                magic = f.read(4)
        except OSError as exc:
            raise ModelError(f"--judge-model {path} cannot be read: {exc.strerror}") from None
        if magic != GGUF_MAGIC:
            raise ModelError(f"--judge-model {path} is not a GGUF file (it does not start "
                             "with 'GGUF'); give a llama.cpp GGUF model")


def _check_profile_embedder(settings: Settings) -> None:
    """The profile's embedder, or any other one present (the runner falls back to it)."""
    from localeval import models

    manifest = models.load_manifest()
    wanted = manifest.profile(settings.profile)["embedder"]
    names = [wanted] + [n for n, s in manifest.models.items() if s.role == "embedder"]
    problems = []
    for name in dict.fromkeys(names):
        state = models.check(manifest.get(name), full=False)
        if state.ok:
            return
        problems.append(f"{name}: {state.detail}")
    raise ModelError("no embedder available: " + "; ".join(problems))
