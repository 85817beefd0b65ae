"""Prediction-powered means: a hand computation, the defined edge cases, coverage by simulation."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from localeval.errors import LabelsError
from localeval.labels.ppi import ppi_difference, ppi_mean

Z = statistics.NormalDist().inv_cdf(0.975)


def test_hand_computation() -> None:
    # y = [1, 0], f = [1, 0] on the labelled rows, f = [1, 0, 1, 0] on all N = 4 rows.
    # var(y) = cov(y, f) = var_lab(f) = 1/2; var_N(f) = 1/3 (ddof 1).
    # λ' = (1/2) / (1/2 + 2·(1/3)/2) = 0.6, capped at (N − n)/N = 0.5, so λ = 1.
    # Var = (1/2 − 2·0.5·0.5 + 0.25·0.5)/2 + 0.25·(1/3)/2 = 1/16 + 1/24 = 5/48.
    # mean = 1·0.5 + 0.5 − 1·0.5 = 0.5; labels alone: Var = 0.5/2 = 1/4, effective = 2·(1/4)/(5/48).
    est = ppi_mean([1, 0, 1, 0], [1, 0], [1, 0])
    assert est.mean == pytest.approx(0.5)
    assert est.lam == pytest.approx(1.0)
    assert est.ci == pytest.approx((max(0.0, 0.5 - Z * math.sqrt(5 / 48)),
                                    min(1.0, 0.5 + Z * math.sqrt(5 / 48))))
    assert est.labels_only_ci == pytest.approx((0.0, 1.0))  # 0.5 ± 0.98, cut to [0, 1]
    assert est.effective_labels == pytest.approx(2 * 0.25 / (5 / 48))
    assert (est.n_labels, est.n_rows, est.judge_mean) == (2, 4, 0.5)


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

    def var(lam: float) -> float:  # the same estimate as two independent means, λ' = λ(N − n)/N
        lam_u = lam * (big_n - n) / big_n
        return (statistics.variance([a - lam_u * b for a, b in zip(y, f_lab, strict=True)]) / n
                + lam_u ** 2 * statistics.variance(f_all) / (big_n - n))

    half = Z * math.sqrt(var(est.lam))
    assert est.ci == pytest.approx((max(0.0, est.mean - half), min(1.0, est.mean + half)))
    assert all(var(est.lam) <= var(g / 100) + 1e-15 for g in range(101))
    half_y = Z * math.sqrt(statistics.variance(y) / n)
    assert est.labels_only_ci == pytest.approx((max(0.0, statistics.fmean(y) - half_y),
                                                min(1.0, statistics.fmean(y) + half_y)))
    assert est.effective_labels == pytest.approx(n * statistics.variance(y) / n / var(est.lam))


def test_alpha_sets_the_width() -> None:
    f = [i / 20 for i in range(20)]
    y = [1.0 if v > 0.4 else 0.0 for v in f[:10]]
    wide, narrow = ppi_mean(f, f[:10], y, alpha=0.05), ppi_mean(f, f[:10], y, alpha=0.2)
    assert narrow.ci[1] - narrow.ci[0] < wide.ci[1] - wide.ci[0]
    assert narrow.mean == wide.mean


def test_all_labels_equal_get_a_defined_nonzero_interval() -> None:
    est = ppi_mean([0.9, 0.2, 0.8, 0.7, 0.1], [0.9, 0.2, 0.8, 0.7], [1, 1, 1, 1])
    # variance of [1, 1, 1, 1, 0, 1] (one pseudo-label at each end), λ = 0
    var = statistics.variance([1, 1, 1, 1, 0, 1]) / 4
    assert est.lam == 0.0 and est.mean == 1.0
    assert est.ci == pytest.approx((1 - Z * math.sqrt(var), 1.0))
    assert est.ci == est.labels_only_ci and est.ci[0] < 0.7


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
