"""Extracted rows as arrays a head is fitted and measured on, and a row's score under a head.

A `Table` holds every claim the judge decided (its layers' states, the judge's own P, its label
when one is known, its row) and, per row, the claims settled without the judge (a quote, an
instruction to the evaluator, an unfounded fragment: their verdict is fixed). `row_scores`
scores each row as `faithfulness` does — the share of its claims supported (greedy) and the mean
P(supported) (weighted) — with P from any scorer, so the judge's own P and a head are compared on
exactly the metric a user sees.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from localeval.verifier.extract import RowFeatures


@dataclass
class Table:
    X: np.ndarray  # [claims, layers * n_embd] float32
    p: np.ndarray  # the judge's own P(supported)
    label: np.ndarray  # 1 / 0 / nan (unknown)
    row: np.ndarray  # the claim's row (index into rows)
    overruled: np.ndarray  # a mechanical check said 0 whatever the judge: stays 0
    rows: list[dict[str, Any]] = field(default_factory=list)
    """Per row: id, language, group, and `fixed` (verdict, p) of claims settled by a rule."""

    @property
    def language(self) -> np.ndarray:
        return np.array([self.rows[r]["language"] for r in self.row])

    def columns(self, cols: np.ndarray) -> Table:
        """The same claims with only these feature columns (some of the layers read)."""
        X = self.X[:, cols] if len(self.X) else np.zeros((0, len(cols)), np.float32)
        return Table(X, self.p, self.label, self.row, self.overruled, self.rows)

    def subset_rows(self, keep: Sequence[int]) -> Table:
        """The table of these rows only (renumbered)."""
        index = {r: i for i, r in enumerate(keep)}
        mask = np.isin(self.row, list(keep))
        return Table(self.X[mask], self.p[mask], self.label[mask],
                     np.array([index[r] for r in self.row[mask]], dtype=int),
                     self.overruled[mask], [self.rows[r] for r in keep])


def build_table(feats: list[RowFeatures], labels: dict[str, list[int | None] | None],
                groups: dict[str, str]) -> Table:
    """`labels`: row id → per-sentence labels (None: unknown); `groups`: row id → the group
    folds keep together (a pair's two sides, a source row's variants)."""
    X, p, y, rix, over = [], [], [], [], []
    rows = []
    for i, f in enumerate(feats):
        per = labels.get(f.row_id) or []
        fixed = []
        for c in f.claims:
            if c.hidden is None:
                fixed.append((c.verdict, 1.0 if c.verdict else 0.0))
                continue
            X.append(c.hidden.astype(np.float32))
            p.append(0.5 if c.judge_p_yes is None else c.judge_p_yes)
            lab = per[c.sentence] if c.sentence < len(per) else None
            y.append(np.nan if lab is None else float(lab))
            rix.append(i)
            over.append(c.overruled)
        rows.append({"id": f.row_id, "language": f.language, "fixed": fixed,
                     "group": groups.get(f.row_id, f.row_id), "error": f.error,
                     "n_claims": len(f.claims)})
    dim = X[0].shape[0] if X else 0
    return Table(np.stack(X) if X else np.zeros((0, dim), np.float32),
                 np.array(p, dtype=np.float64), np.array(y, dtype=np.float64),
                 np.array(rix, dtype=int), np.array(over, dtype=bool), rows)


def row_scores(table: Table, p: np.ndarray, tau: dict[str, float]
               ) -> tuple[np.ndarray, np.ndarray]:
    """(greedy, weighted) per row as faithfulness scores it, given P per judged claim; nan for a
    row without any claim (unscored)."""
    n = len(table.rows)
    hard_sum, soft_sum = np.zeros(n), np.zeros(n)
    count = np.zeros(n)
    taus = np.array([tau.get(table.rows[r]["language"], tau.get("en", 0.5)) for r in table.row])
    verdict = (p >= taus) & ~table.overruled
    np.add.at(hard_sum, table.row, verdict.astype(float))
    np.add.at(soft_sum, table.row, np.where(table.overruled, 0.0, p))
    np.add.at(count, table.row, 1.0)
    for i, r in enumerate(table.rows):
        for v, q in r["fixed"]:
            hard_sum[i] += v
            soft_sum[i] += q
            count[i] += 1
    with np.errstate(invalid="ignore", divide="ignore"):
        return hard_sum / count, soft_sum / count
