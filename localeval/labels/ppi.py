"""Prediction-powered means: the judge's scores on every row, corrected by a few human labels.

Power-tuned PPI++ (Angelopoulos, Duchi & Zrnic 2023) for a mean. The judge scored all N rows
(f); a person labelled a uniform random n of them (y). The estimate is

    mean = λ·mean_N(f) + mean_n(y − λ·f)

unbiased for any fixed λ; λ is chosen to minimise the plug-in variance and clipped to [0, 1]
(0 = the labels alone, 1 = classic PPI). With U the N − n unlabelled rows and λ' = λ·(N − n)/N the
same estimate reads mean_n(y − λ'·f) + λ'·mean_U(f), two independent means, so

    Var = s²(e) / n + λ'²·s²_N(f) / (N − n),    e = y − λ'·f on the labelled rows

(s²_N(f) over all N judge scores). s²(e) is the variance of the n residuals with two
pseudo-residuals added, lo − λ'·mean_n(f) and hi − λ'·mean_n(f) (a label at each end of the
range, the judge at its labelled mean: one unseen disagreement of each sign), each weighing
z²/2 rows (1.92 at 95 %), as Agresti & Coull add z²/2 successes and failures to a proportion;
the labels-only variance gets the same two pseudo-labels. Without them a sample that happens to
hold no judge error, or labels all 1, gives a near-zero variance: with 25 labels the plug-in
interval covered 0.59-0.89 of draws where the judge rarely errs, and a sample of labels near 0
or 1 undercovers as the Wald interval does (scripts/ppi_small_sample.py, research/labels.md).
The pseudo-rows weigh O(1/n), so at large n the interval is the plug-in one.

The 95 % interval is mean ± t·√Var, cut to the labels' range, t the Student quantile for n − 1
degrees of freedom. When Var is not below the labels-only variance, λ = 0: the labels alone.
The target is the mean a person would give over the population the rows were drawn from (the
interval is conservative for the N rows themselves).

Defined edge cases: fewer than 2 labels is a LabelsError. A constant judge, or one whose scores
fall as the labels rise, carries no information: λ = 0. When every row is labelled (n = N), the
estimate is the labels' mean.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

from localeval.errors import LabelsError

MIN_LABELS = 2


@dataclass(frozen=True)
class PPIEstimate:
    """A corrected mean beside the judge's and the labels' own."""

    mean: float  # the prediction-powered mean
    ci: tuple[float, float]  # its (1 − alpha) interval
    labels_only_mean: float  # the labels' mean
    labels_only_ci: tuple[float, float]
    judge_mean: float  # the judge's mean over all N rows
    n_labels: int
    n_rows: int
    effective_labels: float  # labels the labels-only mean needs for the same width
    lam: float  # the power-tuning weight λ in [0, 1]


def ppi_mean(
    judge_all: Sequence[float],
    judge_labelled: Sequence[float],
    labels: Sequence[float],
    *,
    alpha: float = 0.05,
) -> PPIEstimate:
    """The prediction-powered mean of `labels` (each in [0, 1]) given the judge's scores on all
    N rows (`judge_all`, the labelled rows included) and on the n labelled rows
    (`judge_labelled`, in the order of `labels`). LabelsError for unusable input."""
    ys = _finite(labels, "label")
    bad = [y for y in ys if not 0.0 <= y <= 1.0]
    if bad:
        raise LabelsError(f"a label must be in [0, 1], got {bad[0]!r}")
    return _ppi(_finite(judge_all, "judge score"), _finite(judge_labelled, "judge score"), ys,
                alpha=alpha, lo=0.0, hi=1.0)


def ppi_difference(
    judge_all_a: Sequence[float],
    judge_all_b: Sequence[float],
    judge_labelled_a: Sequence[float],
    judge_labelled_b: Sequence[float],
    labels_a: Sequence[float],
    labels_b: Sequence[float],
    *,
    alpha: float = 0.05,
) -> PPIEstimate:
    """The prediction-powered difference of means, run A − run B, for two runs over the same N
    rows (position i of `judge_all_a` and `judge_all_b` is the same sample) whose answers were
    labelled on the same n samples (position j of every labelled sequence is one sample). PPI on
    the paired differences y_A − y_B with the judge's f_A − f_B; every field of the result is a
    difference (`labels_only_mean` the labels' difference, `judge_mean` the judge's)."""
    if len(judge_all_a) != len(judge_all_b):
        raise LabelsError(f"the two runs must cover the same rows: {len(judge_all_a)} judge "
                          f"scores against {len(judge_all_b)}")
    if not len(judge_labelled_a) == len(judge_labelled_b) == len(labels_a) == len(labels_b):
        raise LabelsError("the two runs must be labelled on the same samples: "
                          f"{len(labels_a)} labels against {len(labels_b)}")
    ya, yb = _finite(labels_a, "label"), _finite(labels_b, "label")
    bad = [y for y in ya + yb if not 0.0 <= y <= 1.0]
    if bad:
        raise LabelsError(f"a label must be in [0, 1], got {bad[0]!r}")
    fa, fb = _finite(judge_all_a, "judge score"), _finite(judge_all_b, "judge score")
    la = _finite(judge_labelled_a, "judge score")
    lb = _finite(judge_labelled_b, "judge score")
    return _ppi(_minus(fa, fb), _minus(la, lb), _minus(ya, yb), alpha=alpha, lo=-1.0, hi=1.0)


def _minus(xs: list[float], ys: list[float]) -> list[float]:
    return [x - y for x, y in zip(xs, ys, strict=True)]


def t_quantile(q: float, df: int) -> float:
    """Student's t quantile: exact for 1 and 2 degrees of freedom, else the Cornish-Fisher
    expansion about the normal quantile (Hill 1970; within 0.004 at df 3, 5e-4 from df 5)."""
    if df == 1:
        return math.tan(math.pi * (q - 0.5))
    if df == 2:
        return (2 * q - 1) / math.sqrt(2 * q * (1 - q))
    z = NormalDist().inv_cdf(q)
    return (z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)
            + (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / (384 * df**3)
            + (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z)
            / (92160 * df**4))


def _finite(values: Sequence[float], what: str) -> list[float]:
    out = []
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise LabelsError(f"a {what} must be a finite number, got {v!r}")
        out.append(float(v))
    return out


def _mean(xs: Sequence[float]) -> float:
    return math.fsum(xs) / len(xs)


def _cov(xs: Sequence[float], ys: Sequence[float]) -> float:
    """Sample covariance (ddof 1)."""
    mx, my = _mean(xs), _mean(ys)
    return math.fsum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / (len(xs) - 1)


def _pseudo_variance(xs: Sequence[float], low: float, high: float, weight: float) -> float:
    """Sample variance of xs with `low` and `high` added, each weighing `weight` rows
    (frequency weights: n + 2·weight rows in all, less one)."""
    rows = len(xs) + 2.0 * weight
    m = (math.fsum(xs) + weight * (low + high)) / rows
    ss = math.fsum((x - m) ** 2 for x in xs) + weight * ((low - m) ** 2 + (high - m) ** 2)
    return ss / (rows - 1.0)


def _ppi(f_all: list[float], f_lab: list[float], y: list[float], *, alpha: float, lo: float,
         hi: float) -> PPIEstimate:
    if not 0.0 < alpha < 1.0:
        raise LabelsError(f"alpha must be in (0, 1), got {alpha!r}")
    n, big_n = len(y), len(f_all)
    if len(f_lab) != n:
        raise LabelsError(f"{len(f_lab)} judge scores for {n} labels: give the judge's score "
                          "of every labelled row")
    if n < MIN_LABELS:
        raise LabelsError(f"{n} label(s): an interval needs at least {MIN_LABELS} labels drawn "
                          "uniformly at random")
    if big_n < n:
        raise LabelsError(f"{n} labels but the judge scored only {big_n} rows: the judge's "
                          "scores on all rows include the labelled ones")
    t = t_quantile(1.0 - alpha / 2.0, n - 1)
    weight = NormalDist().inv_cdf(1.0 - alpha / 2.0) ** 2 / 2.0  # each pseudo-label's weight
    var_y = _cov(y, y)
    c = _cov(y, f_lab) if var_y > 0.0 else 0.0
    var_f_lab = _cov(f_lab, f_lab)
    var_f_all = _cov(f_all, f_all) if big_n > 1 else 0.0
    unlabelled = big_n - n
    if unlabelled == 0 or c <= 0.0:
        lam_u = 0.0
    else:  # minimise (var_y − 2λ'c + λ'² var_f_lab)/n + λ'² var_f_all/(N − n)
        lam_u = c / (var_f_lab + n * var_f_all / unlabelled)
        lam_u = min(lam_u, unlabelled / big_n)  # λ ≤ 1
    var_labels = _pseudo_variance(y, lo, hi, weight) / n
    f_bar = _mean(f_lab)
    var_ppi = _pseudo_variance([a - lam_u * b for a, b in zip(y, f_lab, strict=True)],
                               lo - lam_u * f_bar, hi - lam_u * f_bar, weight) / n
    if unlabelled:
        var_ppi += lam_u * lam_u * var_f_all / unlabelled
    if var_ppi >= var_labels:  # the judge does not narrow it: the labels alone
        lam_u, var_ppi = 0.0, var_labels
    lam = lam_u * big_n / unlabelled if unlabelled else 0.0
    judge_mean = _mean(f_all)
    labels_mean = _mean(y)
    mean = lam * judge_mean + labels_mean - lam * _mean(f_lab)

    def interval(centre: float, var: float) -> tuple[float, float]:
        half = t * math.sqrt(var)
        return (max(lo, centre - half), min(hi, centre + half))

    return PPIEstimate(
        mean=min(hi, max(lo, mean)),
        ci=interval(mean, var_ppi),
        labels_only_mean=labels_mean,
        labels_only_ci=interval(labels_mean, var_labels),
        judge_mean=judge_mean,
        n_labels=n,
        n_rows=big_n,
        effective_labels=n * var_labels / var_ppi if var_ppi > 0.0 else float(n),
        lam=min(1.0, max(0.0, lam)),
    )
