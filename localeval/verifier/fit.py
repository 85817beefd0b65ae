"""Fitting a head: logistic regression on standardised activations, measured on held-out folds.

The head's logit is w·x + b over the standardised states of the chosen layers (and the judge's
logit(P)). It learns from claim labels (cross-entropy) and from preference pairs (the preferred
answer's score — the mean P over its claims, as `faithfulness.weighted` — above the other's,
a logistic loss on the difference), with an L2 penalty, by L-BFGS (scipy). τ per language is the
P that best separates the labelled claims (balanced accuracy) in held-out predictions. The
judge's own logit(P) is a feature the penalty does not shrink, so with little evidence in the
states the head stays the judge's P, rescaled.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from localeval.verifier.table import Table, row_scores

PAIR_SHARPNESS = 10.0
_EPS = 1e-6


@dataclass
class Pair:
    """Two rows of a table (indices) and which one people prefer."""

    a: int
    b: int
    preferred: str  # "a" or "b"


@dataclass
class Model:
    mean: np.ndarray
    scale: np.ndarray
    w: np.ndarray
    b: float
    with_p: bool

    def features(self, table: Table) -> np.ndarray:
        return design(table, self.with_p)

    def predict(self, table: Table) -> np.ndarray:
        if not len(table.p):
            return np.zeros(0)
        z = ((self.features(table) - self.mean) / self.scale) @ self.w + self.b
        return 1.0 / (1.0 + np.exp(-np.clip(z, -60, 60)))


def design(table: Table, with_p: bool) -> np.ndarray:
    X = table.X.astype(np.float64)
    if not with_p:
        return X
    q = np.clip(table.p, _EPS, 1 - _EPS)
    return np.hstack([X, np.log(q / (1 - q))[:, None]])


def fit(table: Table, pairs: Sequence[Pair] = (), *, C: float = 0.05, with_p: bool = True,
        pair_weight: float = 1.0) -> Model:
    """A head fitted on the table's labelled claims and on `pairs` (rows of the same table)."""
    from scipy.optimize import minimize

    X = design(table, with_p)
    mean, scale = X.mean(axis=0), np.maximum(X.std(axis=0), _EPS)
    Z = (X - mean) / scale
    labelled = ~np.isnan(table.label)
    y = table.label[labelled]
    members = [np.flatnonzero(table.row == r) for r in range(len(table.rows))]
    fixed = [sum(q for _, q in r["fixed"]) for r in table.rows]
    count = [len(members[r]) + len(table.rows[r]["fixed"]) for r in range(len(table.rows))]
    usable = [(p.a, p.b, 1.0 if p.preferred == "a" else -1.0) for p in pairs
              if count[p.a] and count[p.b]]
    n_terms = max(1, int(labelled.sum()) + len(usable))
    lam = 1.0 / (C * n_terms)
    d = Z.shape[1]
    penalised = np.ones(d)
    if with_p:  # the judge's own logit(P) is not shrunk: the states only correct it
        penalised[-1] = 0.0

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        w, b = theta[:d], theta[d]
        z = Z @ w + b
        s = 1.0 / (1.0 + np.exp(-np.clip(z, -60, 60)))
        grad_z = np.zeros_like(z)
        total = 0.0
        if labelled.any():
            zl = z[labelled]
            total += float(np.sum(np.logaddexp(0, zl) - y * zl))
            grad_z[labelled] += s[labelled] - y
        for a, b_, sign in usable:
            sa = (s[members[a]].sum() + fixed[a]) / count[a]
            sb = (s[members[b_]].sum() + fixed[b_]) / count[b_]
            m = PAIR_SHARPNESS * sign * (sa - sb)
            total += pair_weight * float(np.logaddexp(0, -m))
            g = -pair_weight * PAIR_SHARPNESS * sign / (1.0 + np.exp(m))
            ds = s * (1 - s)
            grad_z[members[a]] += g * ds[members[a]] / count[a]
            grad_z[members[b_]] -= g * ds[members[b_]] / count[b_]
        total = total / n_terms + 0.5 * lam * float((w * penalised) @ w)
        grad_w = Z.T @ grad_z / n_terms + lam * penalised * w
        return total, np.append(grad_w, grad_z.sum() / n_terms)

    result = minimize(loss, np.zeros(d + 1), jac=True, method="L-BFGS-B",
                      options={"maxiter": 500})
    return Model(mean, scale, result.x[:d], float(result.x[d]), with_p)


def choose_tau(p: np.ndarray, y: np.ndarray, default: float = 0.5) -> float:
    """The cut that best separates labelled claims (balanced accuracy; ties: nearest 0.5)."""
    keep = ~np.isnan(y)
    p, y = p[keep], y[keep]
    if not len(p) or y.min() == y.max():
        return default
    grid = np.round(np.linspace(0.05, 0.95, 91), 3)
    best = max(grid, key=lambda t: (0.5 * (np.mean(p[y == 1] >= t) + np.mean(p[y == 0] < t)),
                                    -abs(t - 0.5)))
    return float(best)


def taus_for(table: Table, p: np.ndarray) -> dict[str, float]:
    lang = table.language
    return {str(g): float(choose_tau(p[lang == g], table.label[lang == g]))
            for g in sorted(set(lang))}  # plain str and float: printed and written as such


def folds(groups: Sequence[str], k: int, seed: int = 0) -> list[np.ndarray]:
    """k folds of row indices, a group's rows always in one fold."""
    names = sorted(set(groups))
    rng = np.random.default_rng(seed)
    rng.shuffle(names)
    fold_of = {g: i % k for i, g in enumerate(names)}
    return [np.array([r for r, g in enumerate(groups) if fold_of[g] == f]) for f in range(k)]


def out_of_fold(table: Table, pairs: Sequence[Pair], k: int, **options: float
                ) -> np.ndarray:
    """Each claim's P from a head fitted without its fold."""
    groups = [r["group"] for r in table.rows]
    out = np.full(len(table.p), np.nan)
    for test in folds(groups, k):
        train = np.setdiff1d(np.arange(len(table.rows)), test)
        sub = table.subset_rows(train)
        index = {r: i for i, r in enumerate(train)}
        sub_pairs = [Pair(index[p.a], index[p.b], p.preferred) for p in pairs
                     if p.a in index and p.b in index]
        model = fit(sub, sub_pairs, **options)  # type: ignore[arg-type]
        mask = np.isin(table.row, test)
        out[mask] = model.predict(table.subset_rows(list(test)))
    return out


def pair_wins(table: Table, pairs: Sequence[Pair], scores: np.ndarray) -> list[float]:
    """Per pair: 1 when the preferred row scores higher, ½ on a tie, 0 when lower or either
    row is unscored (meta_eval.stats.pair_outcome)."""
    from localeval.meta_eval.stats import pair_outcome

    def score(r: int) -> float | None:
        return None if np.isnan(scores[r]) else float(scores[r])

    return [pair_outcome(score(pr.a if pr.preferred == "a" else pr.b),
                         score(pr.b if pr.preferred == "a" else pr.a)) for pr in pairs]


def pair_accuracy(table: Table, pairs: Sequence[Pair], p: np.ndarray,
                  tau: dict[str, float]) -> dict[str, float]:
    """Pairwise accuracy of the row scores, `greedy` (the share of claims supported, as
    `faithfulness`) and `weighted` (the mean P, as `faithfulness.weighted`; ties ½, unscored a
    loss), and the share of pairs the greedy score ties."""
    hard, soft = row_scores(table, p, tau)
    out: dict[str, float] = {}
    for name, s in (("greedy", hard), ("weighted", soft)):
        wins = pair_wins(table, pairs, s)
        out[name] = float(np.mean(wins)) if wins else float("nan")
        if name == "greedy":
            out["ties"] = float(np.mean([w == 0.5 for w in wins])) if wins else float("nan")
    return out
