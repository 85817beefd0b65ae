"""The judge's activations at every verdict of labelled rows, read once and kept on disk.

Each row is judged exactly as `faithfulness` judges it (metrics/claims/score.judge_claims: the
same sentences, rules, templates and requests), with the engine reading the chosen layers at
each verdict slot (judge/llamacpp/hidden.py). What comes out per row: every claim of its answer
with how it was settled (`rule`), the judge's own P(supported) and, for claims the judge
decided, the layers' states at its verdict. Rows are stored one file each under a folder keyed
by the judge, the layers, the templates and the row's content, so an interrupted extraction goes
on where it stopped and a second fit reads instead of judging.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from localeval.verifier.apply import judge_p_yes

STEP = "faithfulness_verdicts"
SAMPLE_FIELDS = ("question", "answer", "contexts")
STORED = {"judge_p_yes": "p_raw"}
"""A `Claim` field stored under another name in a row's file (files already written keep
theirs)."""
FIELD = {v: k for k, v in STORED.items()}


@dataclass
class Claim:
    """One claim of a row's answer: its sentence (0-based), how it was settled, the judge's own
    P(supported) (`judge_p_yes`, stored as `p_raw`) and verdict as the metric decided it, and
    its states when the judge judged it."""

    sentence: int
    statement: str
    rule: str
    verdict: int
    judge_p_yes: float | None
    overruled: bool
    hidden: np.ndarray | None = None


@dataclass
class RowFeatures:
    row_id: str
    language: str
    claims: list[Claim] = field(default_factory=list)
    error: str | None = None


def row_key(row: dict[str, Any], judge_sha: str, layers: Sequence[int],
            templates: dict[str, str]) -> str:
    payload = json.dumps([judge_sha, list(layers), templates,
                          {k: row.get(k) for k in ("question", "answer", "contexts")}],
                         ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()[:32]


def _save(path: Path, feats: RowFeatures) -> None:
    meta = {"row_id": feats.row_id, "language": feats.language, "error": feats.error,
            "claims": [{STORED.get(k, k): getattr(c, k)
                        for k in ("sentence", "statement", "rule", "verdict", "judge_p_yes",
                                  "overruled")}
                       | {"has_hidden": c.hidden is not None} for c in feats.claims]}
    hidden = [c.hidden for c in feats.claims if c.hidden is not None]
    stack = np.stack(hidden).astype(np.float16) if hidden else np.zeros((0, 0), np.float16)
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, meta=np.array(json.dumps(meta, ensure_ascii=False)), hidden=stack)
    tmp.replace(path)


def _stored(path: Path) -> RowFeatures | None:
    """A stored row, or None; a torn or corrupt one is removed (the row is judged again)."""
    if not path.exists():
        return None
    try:
        return _load(path)
    except Exception:
        path.unlink(missing_ok=True)
        return None


def _load(path: Path) -> RowFeatures:
    with np.load(path) as z:
        meta = json.loads(str(z["meta"]))
        stack = z["hidden"].astype(np.float32)
    out = RowFeatures(meta["row_id"], meta["language"], error=meta["error"])
    k = 0
    for c in meta["claims"]:
        h = None
        if c.pop("has_hidden"):
            h, k = stack[k], k + 1
        out.claims.append(Claim(**{FIELD.get(key, key): x for key, x in c.items()}, hidden=h))
    return out


async def _judge_row(row: dict[str, Any], row_id: str, backends: Any, settings: Any
                     ) -> RowFeatures:
    from localeval.data.dataset import to_sample
    from localeval.errors import ConfigError, LocalevalError
    from localeval.executor import sample_language
    from localeval.metrics.base import MetricContext
    from localeval.metrics.claims.score import judge_claims
    from localeval.text import json_safe

    seen: list[tuple[str, Any]] = []

    class Recording(MetricContext):
        async def ask_probs(self, step: str, schema: Any, probe: list[str],
                            **variables: Any) -> Any:
            answer, probs = await super().ask_probs(step, schema, probe, **variables)
            items = variables.get("statements") or []
            if step == STEP and len(items) == len(probs):
                seen.extend(zip(items, probs, strict=True))
            return answer, probs

    sample = to_sample({"id": row_id, **{k: row[k] for k in SAMPLE_FIELDS if k in row}}, 0)
    language = await sample_language(sample, settings, getattr(backends, "embeddings", None))
    ctx = Recording(sample, language, settings, backends.judge, None)
    feats = RowFeatures(row_id, language)
    try:
        claims = await judge_claims(ctx, STEP, sample.answer or "", sample.question,
                                    [c for c in sample.contexts or [] if c.strip()])
    except ConfigError:
        raise  # a setting no row can be judged with (--layers past the judge's): one line
    except LocalevalError as exc:
        feats.error = str(exc)
        return feats
    found = {item: fp for item, fp in seen}
    for claim in claims.statements:
        v = claim.support
        fp = (found.get(json_safe(claim.statement))  # as the judge was shown it
              if v.rule in ("judge", "check") else None)
        feats.claims.append(Claim(
            sentence=claim.sentence - 1, statement=claim.statement,
            rule=v.rule or "judge", verdict=v.verdict,
            judge_p_yes=None if fp is None else judge_p_yes(fp),
            overruled=bool(v.novel_details),  # 0 whatever P and τ (claims/verdicts.py)
            hidden=None if fp is None or fp.hidden is None else np.asarray(fp.hidden)))
    return feats


def extract(rows: list[tuple[str, dict[str, Any]]], store: Path, settings: Any,
            layers: Sequence[int], *, judge: Any = None, stored_only: bool = False,
            progress: Callable[[int, int], None] | None = None) -> list[RowFeatures]:
    """Features of every row (id, row), judging only the rows `store` does not hold yet
    (`stored_only`: judging none, the rows not held are left out)."""
    from localeval import prompts
    from localeval.metrics import REGISTRY
    from localeval.models.backends import build_backends
    from localeval.verifier.apply import Verifier

    settings = settings.model_copy(update={"no_cache": True, "verifier": "none"})
    templates = {f"{lang}/{STEP}": prompts.template_sha256(lang, STEP) for lang in ("en", "zh")}
    backends = build_backends(settings, [REGISTRY["faithfulness"]], judge=judge, tap=list(layers))
    assert backends.judge is not None
    backends.judge.verifier = Verifier(None, layers=list(layers), steps={STEP})
    sha = backends.judge.judge.fingerprint
    store.mkdir(parents=True, exist_ok=True)
    paths = [store / f"{row_key(r, sha, layers, templates)}.npz" for _, r in rows]
    held = {i: f for i, p in enumerate(paths) if (f := _stored(p)) is not None}
    todo = [] if stored_only else [i for i in range(len(paths)) if i not in held]

    async def go() -> None:
        gate = asyncio.Semaphore(max(2, 2 * (settings.parallel or 4)))
        done = len(rows) - len(todo)

        async def one(i: int) -> None:
            nonlocal done
            async with gate:
                feats = await _judge_row(rows[i][1], rows[i][0], backends, settings)
            _save(paths[i], feats)
            done += 1
            if progress is not None:
                progress(done, len(rows))

        await asyncio.gather(*(one(i) for i in todo))

    try:
        if todo:
            asyncio.run(go())
    finally:
        backends.close()
    out = []
    for i, ((rid, _), path) in enumerate(zip(rows, paths, strict=True)):
        feats = held.get(i) or (None if stored_only else _load(path))  # judged now: as stored
        if feats is None:
            continue
        feats.row_id = rid
        out.append(feats)
    return out
