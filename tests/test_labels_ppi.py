"""Prediction-powered means: a hand computation, the defined edge cases, coverage by simulation."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from localeval.errors import LabelsError
from localeval.labels.ppi import ppi_difference, ppi_mean, t_quantile

T975 = {1: 12.7062, 2: 4.3027, 3: 3.1824, 5: 2.5706, 11: 2.2010, 24: 2.0639, 99: 1.9842}
"""Student's t 0.975 quantiles by degrees of freedom (printed tables)."""


def T(n: int) -> float:
    return t_quantile(0.975, n - 1)


def test_t_quantiles_match_the_tables() -> None:
    for df, value in T975.items():
        assert t_quantile(0.975, df) == pytest.approx(value, abs=5e-3 if df == 3 else 5e-4)
    assert t_quantile(0.75, 3) == pytest.approx(0.7649, abs=1e-3)
    assert t_quantile(0.975, 10_000) == pytest.approx(statistics.NormalDist().inv_cdf(0.975),
                                                      abs=1e-3)


def W(alpha: float = 0.05) -> float:
    """Each pseudo-label's weight: z²/2."""
    return statistics.NormalDist().inv_cdf(1 - alpha / 2) ** 2 / 2


def pseudo_var(xs: list[float], low: float, high: float, w: float) -> float:
    """Variance of xs with `low` and `high` added at weight w each (n + 2w − 1 in the
    denominator)."""
    rows = len(xs) + 2 * w
    m = (sum(xs) + w * (low + high)) / rows
    return (sum((x - m) ** 2 for x in xs) + w * ((low - m) ** 2 + (high - m) ** 2)) / (rows - 1)


def test_hand_computation() -> None:
    # y = f = [1, 0, 1, 0] on the n = 4 labelled rows, f = [1, 0] * 4 on all N = 8 rows.
    # var(y) = cov(y, f) = var_lab(f) = 1/3; var_N(f) = 2/7 (ddof 1).
    # λ' = (1/3) / (1/3 + 4·(2/7)/4) = 7/13, capped at (N − n)/N = 1/2, so λ = 1.
    # Residuals y − f/2 = [1/2, 0, 1/2, 0]; pseudo-residuals 0 − 1/4 and 1 − 1/4 at weight w:
    # their mean is 1/4, SS = 1/4 + w/2, so Var = (1/4 + w/2)/(3 + 2w)/4 + (1/4)·(2/7)/4.
    # Labels alone: pseudo-labels 0 and 1, mean 1/2, Var = (1 + w/2)/(3 + 2w)/4.
    # (w = 0 gives the plain 1/48 + 1/56 and 1/12.) alpha 0.5: t(0.75, 3 df) = 0.7649.
    w = W(0.5)
    var = (0.25 + w / 2) / (3 + 2 * w) / 4 + 1 / 56
    var_y = (1 + w / 2) / (3 + 2 * w) / 4
    est = ppi_mean([1, 0] * 4, [1, 0, 1, 0], [1, 0, 1, 0], alpha=0.5)
    assert est.mean == pytest.approx(0.5)
    assert est.lam == pytest.approx(1.0)
    half = 0.7649 * math.sqrt(var)
    assert est.ci == pytest.approx((0.5 - half, 0.5 + half), abs=2e-4)
    half_y = 0.7649 * math.sqrt(var_y)
    assert est.labels_only_ci == pytest.approx((0.5 - half_y, 0.5 + half_y), abs=2e-4)
    assert est.effective_labels == pytest.approx(4 * var_y / var)
    assert (est.n_labels, est.n_rows, est.judge_mean) == (4, 8, 0.5)


def test_the_estimate_is_the_formula_and_lambda_minimises_the_variance() -> None:
    rng = random.Random(3)
    f_all = [rng.random() for _ in range(60)]
    idx = rng.sample(range(60), 12)
    f_lab = [f_all[i] for i in idx]
    y = [1.0 if f + rng.gauss(0, 0.3) > 0.5 else 0.0 for f in f_lab]
    est = ppi_mean(f_all, f_lab, y)
    n, big_n = len(y), len(f_all)
    # mean = λ·mean_N(f) + mean_n(y − λ·f)
    rectifier = statistics.fmean([a - est.lam * b for a, b in zip(y, f_lab, strict=True)])
    assert est.mean == pytest.approx(est.lam * statistics.fmean(f_all) + rectifier)
    assert est.labels_only_mean == pytest.approx(statistics.fmean(y))

    def var(lam: float, w: float) -> float:  # two independent means, λ' = λ(N − n)/N
        lam_u = lam * (big_n - n) / big_n
        f_bar = statistics.fmean(f_lab)
        resid = [a - lam_u * b for a, b in zip(y, f_lab, strict=True)]
        return (pseudo_var(resid, -lam_u * f_bar, 1 - lam_u * f_bar, w) / n
                + lam_u ** 2 * statistics.variance(f_all) / (big_n - n))

    assert est.lam > 0
    half = T(n) * math.sqrt(var(est.lam, W()))
    assert est.ci == pytest.approx((max(0.0, est.mean - half), min(1.0, est.mean + half)))
    # λ minimises the plug-in variance (no pseudo-labels)
    assert all(var(est.lam, 0) <= var(g / 100, 0) + 1e-15 for g in range(101))
    var_y = pseudo_var(y, 0, 1, W()) / n
    half_y = T(n) * math.sqrt(var_y)
    assert est.labels_only_ci == pytest.approx((max(0.0, statistics.fmean(y) - half_y),
                                                min(1.0, statistics.fmean(y) + half_y)))
    assert est.effective_labels == pytest.approx(n * var_y / var(est.lam, W()))


def test_alpha_sets_the_width() -> None:
    f = [i / 20 for i in range(20)]
    y = [1.0 if v > 0.4 else 0.0 for v in f[:10]]
    wide, narrow = ppi_mean(f, f[:10], y, alpha=0.05), ppi_mean(f, f[:10], y, alpha=0.2)
    assert narrow.ci[1] - narrow.ci[0] < wide.ci[1] - wide.ci[0]
    assert narrow.mean == wide.mean


def test_all_labels_equal_get_a_defined_nonzero_interval() -> None:
    est = ppi_mean([0.9, 0.2, 0.8, 0.7, 0.1], [0.9, 0.2, 0.8, 0.7], [1, 1, 1, 1])
    # the labels with a pseudo-label at each end (weight z²/2); the judge cannot help: λ = 0
    var = pseudo_var([1, 1, 1, 1], 0, 1, W()) / 4
    assert est.lam == 0.0 and est.mean == 1.0
    assert est.ci == pytest.approx((1 - T975[3] * math.sqrt(var), 1.0), abs=1e-3)
    assert est.ci == est.labels_only_ci and est.ci[0] < 0.6


def test_a_constant_judge_gives_the_labels_alone() -> None:
    est = ppi_mean([0.5] * 10, [0.5] * 4, [1, 0, 1, 1])
    assert est.lam == 0.0 and est.ci == est.labels_only_ci and est.effective_labels == 4
    assert est.mean == pytest.approx(0.75)


def test_every_row_labelled_gives_the_labels_mean() -> None:
    est = ppi_mean([0.9, 0.1, 0.8], [0.9, 0.1, 0.8], [1, 0, 0])
    assert est.mean == pytest.approx(1 / 3) and est.ci == est.labels_only_ci and est.lam == 0.0


def test_a_judge_that_disagrees_is_not_used() -> None:
    f_all = [0.9, 0.1, 0.8, 0.2, 0.7, 0.3]
    est = ppi_mean(f_all, f_all[:4], [0, 1, 0, 1])  # anti-correlated: λ would be negative
    assert est.lam == 0.0 and est.ci == est.labels_only_ci


@pytest.mark.parametrize(("args", "words"), [
    (([0.5, 0.5], [0.5], [1]), "at least 2"),
    (([0.5, 0.5], [], []), "at least 2"),
    (([0.5, 0.5, 0.5], [0.5, 0.5], [1, 1.5]), "[0, 1]"),
    (([0.5, 0.5, 0.5], [0.5, 0.5], [1, -0.1]), "[0, 1]"),
    (([0.5, 0.5, 0.5], [0.5, 0.5], [1, float("nan")]), "finite"),
    (([0.5, float("inf"), 0.5], [0.5, 0.5], [1, 0]), "finite"),
    (([0.5, 0.5, 0.5], [0.5], [1, 0]), "1 judge scores for 2 labels"),
    (([0.5], [0.5, 0.5], [1, 0]), "scored only 1"),
])
def test_unusable_input_is_one_line(args: tuple, words: str) -> None:
    with pytest.raises(LabelsError) as info:
        ppi_mean(*args)
    assert words in str(info.value) and "\n" not in str(info.value)


def test_bad_alpha() -> None:
    with pytest.raises(LabelsError, match="alpha"):
        ppi_mean([0.5, 0.4, 0.3], [0.5, 0.4], [1, 0], alpha=1.5)


def _population(rng: random.Random, size: int) -> tuple[list[float], list[float]]:
    """A biased but informative judge: truth half 1, the judge says 0.7 on average."""
    ys = [float(rng.random() < 0.5) for _ in range(size)]
    fs = [min(1.0, max(0.0, 0.45 + 0.4 * y + rng.gauss(0, 0.2))) for y in ys]
    return ys, fs


def test_coverage_and_width_by_simulation() -> None:
    rng = random.Random(11)
    covered, ratios, draws = 0, [], 600
    for _ in range(draws):
        ys, fs = _population(rng, 300)  # a fresh population each draw: the superpopulation mean
        idx = rng.sample(range(300), 40)
        est = ppi_mean(fs, [fs[i] for i in idx], [ys[i] for i in idx])
        covered += est.ci[0] <= 0.5 <= est.ci[1]
        ratios.append((est.ci[1] - est.ci[0]) / (est.labels_only_ci[1] - est.labels_only_ci[0]))
    assert covered / draws >= 0.92
    assert max(ratios) <= 1.0 + 1e-12 and statistics.fmean(ratios) < 0.9
    assert statistics.fmean(fs) > 0.6  # the judge alone is biased


def _rare_errors(rng: random.Random, size: int, p: float, hit: float, false_alarm: float
                 ) -> tuple[list[float], list[float]]:
    """Labels with mean p and a binary judge that says 1 with P `hit` when the label is 1 and
    `false_alarm` when it is 0: with 25 labels the residuals hold few judge errors, or none."""
    ys = [float(rng.random() < p) for _ in range(size)]
    fs = [float(rng.random() < (hit if y else false_alarm)) for y in ys]
    return ys, fs


@pytest.mark.parametrize(("p", "n", "hit", "false_alarm", "size"), [
    (0.5, 25, 0.95, 0.10, 1000), (0.9, 25, 0.98, 0.10, 500), (0.1, 50, 0.98, 0.10, 500)])
def test_coverage_at_small_n_when_the_judge_rarely_errs(p: float, n: int, hit: float,
                                                        false_alarm: float, size: int) -> None:
    # the plug-in variance (no pseudo-labels) covered 0.92, 0.91 and 0.88 of these draws
    rng = random.Random(7)
    covered, draws = 0, 800
    for _ in range(draws):
        ys, fs = _rare_errors(rng, size, p, hit, false_alarm)
        est = ppi_mean(fs, fs[:n], ys[:n])  # i.i.d. rows: the first n are a random sample
        covered += est.ci[0] <= p <= est.ci[1]
    assert covered / draws >= 0.93


def test_at_large_n_the_interval_is_the_plug_in_one() -> None:
    rng = random.Random(2)
    ys, fs = _population(rng, 20_000)
    n = 4_000
    est = ppi_mean(fs, fs[:n], ys[:n])
    lam_u = est.lam * (20_000 - n) / 20_000
    resid = [a - lam_u * b for a, b in zip(ys[:n], fs[:n], strict=True)]
    plug = statistics.variance(resid) / n + lam_u ** 2 * statistics.variance(fs) / (20_000 - n)
    assert (est.ci[1] - est.ci[0]) / (2 * T(n) * math.sqrt(plug)) == pytest.approx(1, abs=1e-3)


def test_difference_of_two_runs() -> None:
    rng = random.Random(5)
    ya, fa = _population(rng, 200)
    yb, fb = _population(rng, 200)
    idx = rng.sample(range(200), 50)
    d = ppi_difference(fa, fb, [fa[i] for i in idx], [fb[i] for i in idx],
                       [ya[i] for i in idx], [yb[i] for i in idx])
    # the same as PPI on the paired differences, on [−1, 1]
    assert d.labels_only_mean == pytest.approx(statistics.fmean([ya[i] - yb[i] for i in idx]))
    assert d.judge_mean == pytest.approx(statistics.fmean(fa) - statistics.fmean(fb))
    assert d.ci[0] < d.mean < d.ci[1] and d.ci[0] >= -1.0 and d.ci[1] <= 1.0
    assert d.ci[1] - d.ci[0] <= d.labels_only_ci[1] - d.labels_only_ci[0] + 1e-12


def test_difference_of_identically_labelled_runs_is_not_certain() -> None:
    f = [0.9, 0.1, 0.8, 0.2, 0.7]
    d = ppi_difference(f, f, f[:3], f[:3], [1, 0, 1], [1, 0, 1])
    assert d.mean == 0.0 and d.ci[0] < 0.0 < d.ci[1]  # all differences 0: pseudo-labels −1, 1


def test_difference_needs_the_same_rows_and_samples() -> None:
    with pytest.raises(LabelsError, match="same rows"):
        ppi_difference([0.5] * 3, [0.5] * 4, [0.5] * 2, [0.5] * 2, [1, 0], [1, 0])
    with pytest.raises(LabelsError, match="same samples"):
        ppi_difference([0.5] * 3, [0.5] * 3, [0.5] * 2, [0.5] * 2, [1, 0], [1, 0, 1])
