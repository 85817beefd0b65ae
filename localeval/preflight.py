"""Checks made before any model loads, so that a wrong path or setting costs a second, not a
model load followed by an error (or worse, one error per sample).

The settings' own values (ranges, cutoffs, weights) are validated by `config.Settings`; here are
the checks that need the file system: the model files (a manifest model whose size or sha256 no
longer matches is refused here), the fake judge's answers, the embedder folder, the answer cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localeval.config import Settings
from localeval.errors import ConfigError, ModelError

GGUF_MAGIC = b"GGUF"


def check_before_loading(
    settings: Settings, metrics: Sequence[Any], *, judge: Any = None, embedder: Any = None
) -> None:
    """Raise a LocalevalError (one line) for anything the run would trip over after loading.

    `metrics` are the metrics that will run; `judge`/`embedder` are ready objects, if given
    (they need no file).
    """
    needs_judge = any(m.uses_judge for m in metrics)
    if needs_judge and judge is None:
        _check_judge(settings)
    if any(m.uses_embedder for m in metrics) and embedder is None:
        _check_embedder(settings)
    if needs_judge:
        _check_cache(settings)


def _check_judge(settings: Settings) -> None:
    from localeval import models

    if settings.judge == "fake":
        if settings.fake_answers is None:
            raise ConfigError("--judge fake needs --fake-answers FILE (a JSON list of raw answers)")
        if not Path(settings.fake_answers).is_file():
            raise ConfigError(f"--fake-answers {settings.fake_answers} not found")
        return
    if settings.judge_model is not None:
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
        return
    manifest = models.load_manifest()
    models.require(manifest.get(manifest.profile(settings.profile)["judge"]))


def _check_embedder(settings: Settings) -> None:
    from localeval import models

    if settings.embedder is not None:
        if not Path(settings.embedder).is_dir():
            raise ModelError(f"--embedder {settings.embedder} is not a folder; give a "
                             "sentence-transformers model folder")
        return
    if settings.judge == "fake":  # the hash embedder stands in
        return
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


def _check_cache(settings: Settings) -> None:
    from localeval.judge.cache import AnswerCache

    path = settings.cache_path()
    if path is not None:
        AnswerCache(path).close()  # ConfigError, with what to do, when it cannot be used
