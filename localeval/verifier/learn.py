"""`localeval verifier fit`: a head learned from a user's own labelled rows or pairs.

The data is what `meta-eval` reads (localeval/meta_eval/formats.py): labelled rows (`label` 0/1)
or preference pairs. A row labelled 1 makes every claim of its answer supported; a row labelled
0 with one claim makes that claim unsupported (a 0-row of several claims says only that some
claim is wrong: it is measured, not learned from — give such data as pairs); a pair teaches
that the preferred answer's mean P(supported) is above the other's. The judge's activations
are read once (localeval/verifier/extract.py, kept under `store`), a head is fitted k times on
k−1 folds (rows of one pair always together) and measured on the fold it did not see, then
once on everything and written. Before (the judge's raw P at the fitted τ) and after (the
head) are reported with bootstrap 95 % intervals: AUROC and κ for rows, pairwise accuracy for
pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from localeval.errors import ConfigError, DatasetError
from localeval.meta_eval.stats import auroc, bootstrap_ci, cohen_kappa
from localeval.verifier.extract import STEP, RowFeatures, extract
from localeval.verifier.fit import Pair, fit, out_of_fold, pair_wins, taus_for
from localeval.verifier.head import Head, save_head
from localeval.verifier.table import Table, build_table, row_scores

MIN_ROWS = 50
DEFAULT_LAYERS = [17, 23]
RAW_TAU = {"en": 0.6, "zh": 0.45}


@dataclass
class Labelled:
    """Rows to judge (id, row), per row its claim labels, groups, and the pairs or row labels."""

    rows: list[tuple[str, dict[str, Any]]]
    row_labels: dict[str, int]
    pairs: list[tuple[str, str, str]]  # (id a, id b, preferred)


def read(path: Path) -> Labelled:
    """The labelled data, refused in one line when it cannot teach a head."""
    from localeval.meta_eval.formats import load

    data = load(path)
    if data.kind == "pairs":
        judged = [p for p in data.pairs if p.preferred != "tie"]
        rows = [(p.row_id(s), p.a if s == "a" else p.b) for p in judged for s in ("a", "b")]
        out = Labelled(rows, {}, [(p.row_id("a"), p.row_id("b"), p.preferred) for p in judged])
    else:
        usable = [r for r in data.rows if r.label is not None]
        out = Labelled([(r.id, r.row) for r in usable], {r.id: int(r.label) for r in usable
                                                          if r.label is not None}, [])
        if len(set(out.row_labels.values())) < 2:
            raise DatasetError(f"{path}: every row has the same label; a head needs rows "
                               "labelled 1 and rows labelled 0")
    if len(out.rows) < MIN_ROWS:
        raise DatasetError(f"{path}: {len(out.rows)} usable rows; a head needs at least "
                           f"{MIN_ROWS} (pairs count twice)")
    return out


def _table(data: Labelled, feats: list[RowFeatures]) -> tuple[Table, list[Pair]]:
    labels: dict[str, list[int | None] | None] = {}
    for f in feats:
        label = data.row_labels.get(f.row_id)
        n = 1 + max((c.sentence for c in f.claims), default=-1)
        judged = sum(c.hidden is not None for c in f.claims)
        if label == 1 or (label == 0 and judged == 1):
            labels[f.row_id] = [label] * n
    groups = {rid: rid.rsplit("/", 1)[0] for rid, _ in data.rows} if data.pairs else {}
    table = build_table(feats, labels, groups)
    index = {f.row_id: i for i, f in enumerate(feats)}
    pairs = [Pair(index[a], index[b], pref) for a, b, pref in data.pairs]
    return table, pairs


def _figures(table: Table, pairs: list[Pair], data: Labelled, p: np.ndarray,
             tau: dict[str, float]) -> dict[str, Any]:
    hard, soft = row_scores(table, p, tau)
    out: dict[str, Any] = {}
    if pairs:
        wins = pair_wins(table, pairs, hard)
        out["pairwise"] = float(np.mean(wins))
        out["pairwise_ci"] = bootstrap_ci(lambda w: float(np.mean(w)), wins)
        return out
    ids = [r["id"] for r in table.rows]
    keep = [i for i, rid in enumerate(ids) if rid in data.row_labels and not np.isnan(soft[i])]
    y = [data.row_labels[ids[i]] for i in keep]
    s = [float(soft[i]) for i in keep]
    said = [int(hard[i] >= 0.5) for i in keep]
    out["auroc"] = auroc(s, y)
    out["auroc_ci"] = bootstrap_ci(lambda a, b: auroc(list(a), [int(v) for v in b]), s, y)
    out["kappa"] = cohen_kappa(said, y)
    out["kappa_ci"] = bootstrap_ci(lambda a, b: cohen_kappa(list(a), list(b)), said, y)
    return out


def learn(path: Path, out: Path, settings: Any, *, layers: list[int] | None = None,
          folds: int = 5, C: float = 0.05, store: Path | None = None,
          progress: Any = None) -> dict[str, Any]:
    """Fit a head on the data at `path`, write it to `out`, return the figures."""
    from localeval import models, prompts

    layers = layers or DEFAULT_LAYERS
    data = read(path)
    if out.is_dir():
        raise ConfigError(f"--out {out} is a folder; name the head file to write")
    if any(p.exists() and not p.is_dir() for p in out.parents):
        raise ConfigError(f"--out {out}: a folder above it is a file; choose another --out")
    store = store or out.with_name(out.name + ".features")
    try:
        store.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise ConfigError(f"--store {store} cannot be a folder of stored activations "
                          f"({exc.strerror or exc}); name a folder") from None
    feats = extract(data.rows, store, settings, layers, progress=progress)
    broken = [f.row_id for f in feats if f.error]
    table, pairs = _table(data, feats)
    if not len(table.p):
        raise DatasetError(f"{path}: the judge decided no claim of any row; nothing to learn")
    oof = out_of_fold(table, pairs, folds, C=C, with_p=True)
    tau = taus_for(table, oof) if not np.isnan(table.label).all() else dict(RAW_TAU)
    model = fit(table, pairs, C=C, with_p=True)
    figures = {"before (raw P)": _figures(table, pairs, data, table.p, RAW_TAU),
               "after (head, held-out folds)": _figures(table, pairs, data, oof, tau),
               "rows": len(data.rows), "claims": len(table.p), "errors": broken,
               "folds": folds, "layers": layers, "tau": tau}
    sha = _judge_sha(settings, models)
    head = Head.build(
        mean=model.mean, scale=model.scale, weights=model.w, bias=model.b, judge_sha256=sha,
        templates={f"{lang}/{STEP}": prompts.template_sha256(lang, STEP) for lang in ("en", "zh")},
        layers=layers, n_embd=int(table.X.shape[1] // len(layers)), with_p=True, tau=tau,
        trained_on={"data": str(path), "sha256": _sha256(path), "rows": len(data.rows)},
        reached={k: v for k, v in figures.items() if k.startswith(("before", "after"))})
    out.parent.mkdir(parents=True, exist_ok=True)
    save_head(head, out)
    return figures


def _judge_sha(settings: Any, models: Any) -> str:
    if settings.judge_model is not None:
        return models.sha256_of_user_path(Path(settings.judge_model))
    manifest = models.load_manifest()
    return models.expected_sha256(manifest.get(manifest.profile(settings.profile)["judge"]))


def _sha256(path: Path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()
