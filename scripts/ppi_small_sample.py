"""Which 95 % interval for the prediction-powered mean holds at small n? Prints JSON.

Synthetic data with known truth: each cell is a label mean p (0.1, 0.5, 0.9), a judge (how its
score f depends on the binary label y), N rows and n of them labelled. Each of `--draws` draws
makes a fresh population of N rows (y, f) from the cell's distribution and labels the first n
(the rows are i.i.d., so they are a uniform random sample); every method below gets the same
draws. Coverage is the share of intervals holding p (the population mean the rows were drawn
from, the harder target) and, beside it, the mean of the N rows' labels; width is the PPI
interval's width as a share of the plain labels-only t interval's (mean over draws).

The methods share the power-tuned PPI++ point estimate (λ' = λ·(N − n)/N chosen on the labels,
as `localeval/labels/ppi.py` does) unless named otherwise; they differ in the variance and the
quantile:

- `plugin_t`: the plug-in variance s²(y − λ'f)/n + λ'²·s²_N(f)/(N − n), Student t, n − 1 df
  (what ppi.py shipped before); `plugin_z` the same with the normal quantile;
- `ddof2`: the residual variance with n − 2 in the denominator and t with n − 2 df (one
  parameter, λ, estimated from the same labels: the regression estimator's correction);
- `jackknife`: the delete-one jackknife variance of the whole estimate, λ re-tuned without each
  label (counts λ's own sampling error), plus λ'²·s²_N(f)/(N − n); t, n − 1 df;
- `crossfit`: λ for each of 5 folds tuned on the other folds' labels; plug-in variance of the
  cross-fitted residuals; t, n − 1 df;
- `pseudo`: the plug-in variance with two pseudo-labels added to the residuals, one at each end
  of the label range with the judge at its labelled mean (an unseen disagreement of each sign,
  as Agresti–Coull and Wilson add pseudo-counts to a proportion); the labels-only variance with
  the same two pseudo-labels; t, n − 1 df;
- `pseudo_jackknife`: the larger of the two;
- `agresti_t`: `pseudo` with each pseudo-label weighing z²/2 ≈ 1.92 rows (Agresti & Coull's
  "add two successes and two failures" for 95 %); `agresti_z` the same with the normal quantile.

Every method falls back to its own labels-only interval when that one is narrower (λ = 0), and
cuts the interval to [0, 1]. `agresti_t` is what localeval/labels/ppi.py computes (chosen on
this comparison: research/labels.md). Summary: per method and n, the lowest and mean coverage
over the cells, the share of cells under 0.93, and the mean width share over the informative
judges.

    python scripts/ppi_small_sample.py --draws 4000 > research/ppi_small_sample.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from statistics import NormalDist
from typing import Any

import numpy as np

from localeval.labels.ppi import t_quantile

JUDGES = {
    "near_perfect": "binary f: P(f=1 | y=1) 0.98, P(f=1 | y=0) 0.02 (rare disagreements)",
    "binary_good": "binary f: 0.95 / 0.10",
    "binary_biased": "binary f: 0.90 / 0.45 (calls too much faithful, like the 1.5B)",
    "binary_weak": "binary f: 0.65 / 0.45",
    "graded": "share of 1-3 claims judged supported: each 0.92 when y=1; when y=0 one claim is "
              "wrong and judged supported 0.5, the rest 0.92",
    "continuous": "f = clip(0.45 + 0.4·y + N(0, 0.2²), 0, 1)",
    "uninformative": "binary f, P(f=1) 0.7 whatever y",
}
INFORMATIVE = [j for j in JUDGES if j != "uninformative"]
METHODS = ("plugin_z", "plugin_t", "ddof2", "jackknife", "crossfit", "pseudo", "pseudo_jackknife",
           "agresti_t", "agresti_z")
Z = NormalDist().inv_cdf(0.975)


def population(judge: str, p: float, draws: int, size: int, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray]:
    """(y, f), each draws × size, from the cell's distribution."""
    y = (rng.random((draws, size)) < p).astype(float)
    binary = {"near_perfect": (0.98, 0.02), "binary_good": (0.95, 0.10),
              "binary_biased": (0.90, 0.45), "binary_weak": (0.65, 0.45),
              "uninformative": (0.70, 0.70)}
    if judge in binary:
        hit, false_alarm = binary[judge]
        f = (rng.random((draws, size)) < np.where(y == 1, hit, false_alarm)).astype(float)
    elif judge == "graded":
        k = rng.integers(1, 4, (draws, size))
        ok = rng.binomial(k - (y == 0), 0.92)  # the claims that are right
        wrong = (y == 0) & (rng.random((draws, size)) < 0.5)  # the wrong claim called supported
        f = (ok + wrong) / k
    else:
        f = np.clip(0.45 + 0.4 * y + rng.normal(0.0, 0.2, (draws, size)), 0.0, 1.0)
    return y, f


def _var(x: np.ndarray) -> np.ndarray:
    return x.var(axis=-1, ddof=1)


def _lam(vy: np.ndarray, c: np.ndarray, vfl: np.ndarray, n: int, vfa: np.ndarray, big_n: int
         ) -> np.ndarray:
    """λ' minimising the plug-in variance, in [0, (N − n)/N]; 0 when the judge does not help."""
    unl = big_n - n
    denom = vfl + n * vfa / unl
    ok = (c > 0) & (vy > 0) & (denom > 0)
    lam = np.where(ok, c / np.where(denom > 0, denom, 1.0), 0.0)
    return np.clip(lam, 0.0, unl / big_n)


def _pseudo_var(resid: np.ndarray, lo_val: np.ndarray, hi_val: np.ndarray, w: float = 1.0
                ) -> np.ndarray:
    """Sample variance (ddof 1) of each row of `resid` with two values of weight w appended
    (frequency weights: the total weight n + 2w counts as that many rows)."""
    total = resid.shape[1] + 2 * w
    m = (resid.sum(1) + w * (lo_val + hi_val)) / total
    ss = ((resid - m[:, None]) ** 2).sum(1) + w * ((lo_val - m) ** 2 + (hi_val - m) ** 2)
    return ss / (total - 1)


def intervals(y: np.ndarray, fl: np.ndarray, fa: np.ndarray, method: str, folds: int = 5
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(lo, hi) per draw of `method`'s 95 % interval and of its own labels-only one;
    y, fl: draws × n, fa: draws × N."""
    n, big_n = y.shape[1], fa.shape[1]
    unl = big_n - n
    vfa = _var(fa)
    fu = (fa.sum(1) - fl.sum(1)) / unl  # the unlabelled rows' judge mean
    yb, fb = y.mean(1), fl.mean(1)
    vy, vfl = _var(y), _var(fl)
    c = ((y - yb[:, None]) * (fl - fb[:, None])).sum(1) / (n - 1)
    lam = _lam(vy, c, vfl, n, vfa, big_n)
    mean = yb - lam * fb + lam * fu
    df = n - 1
    var_lab = np.where(vy > 0, vy, _pseudo_var(y, np.zeros(len(y)), np.ones(len(y)))) / n
    if method == "crossfit":
        fold = np.arange(n) % folds
        lam_i = np.zeros_like(y)
        for k in range(folds):
            keep = fold != k
            yk, fk = y[:, keep], fl[:, keep]
            ck = ((yk - yk.mean(1)[:, None]) * (fk - fk.mean(1)[:, None])).sum(1) / (
                keep.sum() - 1)
            lam_i[:, ~keep] = _lam(_var(yk), ck, _var(fk), n, vfa, big_n)[:, None]
        resid = y - lam_i * fl
        lam_bar = lam_i.mean(1)
        mean = resid.mean(1) + lam_bar * fu
        var = _var(resid) / n + lam_bar**2 * vfa / unl
    else:
        resid = y - lam[:, None] * fl
        var_plug = _var(resid) / n + lam**2 * vfa / unl
        var = var_plug
        if method == "ddof2":
            var = np.where(lam > 0, _var(resid) * (n - 1) / (n - 2) / n + lam**2 * vfa / unl,
                           var_plug)
            df = n - 2
        if method in ("pseudo", "pseudo_jackknife", "agresti_t", "agresti_z"):
            zero, w = np.zeros(len(y)), Z * Z / 2 if method.startswith("agresti") else 1.0
            var = (_pseudo_var(resid, -lam * fb, 1.0 - lam * fb, w) / n + lam**2 * vfa / unl)
            var_lab = _pseudo_var(y, zero, zero + 1.0, w) / n
        if method in ("jackknife", "pseudo_jackknife"):
            m = n - 1
            sy, sf = y.sum(1)[:, None] - y, fl.sum(1)[:, None] - fl
            syy = (y * y).sum(1)[:, None] - y * y
            sff = (fl * fl).sum(1)[:, None] - fl * fl
            syf = (y * fl).sum(1)[:, None] - y * fl
            vy_i = (syy - sy * sy / m) / (m - 1)
            vf_i = (sff - sf * sf / m) / (m - 1)
            c_i = (syf - sy * sf / m) / (m - 1)
            lam_i = _lam(vy_i, c_i, vf_i, m, vfa[:, None], big_n - 1)
            theta = sy / m - lam_i * sf / m + lam_i * fu[:, None]
            v_j = (m / n) * ((theta - theta.mean(1)[:, None]) ** 2).sum(1)
            var_j = v_j + lam**2 * vfa / unl
            var = np.maximum(var, var_j) if method == "pseudo_jackknife" else var_j
    normal = method in ("plugin_z", "agresti_z")
    q = Z if normal else t_quantile(0.975, df)
    q_lab = Z if normal else t_quantile(0.975, n - 1)
    use_lab = (var >= var_lab) | (lam <= 0)
    centre = np.where(use_lab, yb, mean)
    half = np.where(use_lab, q_lab * np.sqrt(var_lab), q * np.sqrt(var))
    half_lab = q_lab * np.sqrt(var_lab)
    return (np.clip(centre - half, 0.0, 1.0), np.clip(centre + half, 0.0, 1.0),
            np.clip(yb - half_lab, 0.0, 1.0), np.clip(yb + half_lab, 0.0, 1.0))


def cell(judge: str, p: float, big_n: int, n: int, draws: int, seed: int) -> dict[str, Any]:
    """Coverage and width of every method on one cell."""
    rng = np.random.default_rng(seed)
    y, f = population(judge, p, draws, big_n, rng)
    fl, yl = f[:, :n], y[:, :n]
    finite = y.mean(1)
    q = t_quantile(0.975, n - 1)
    half_lab = q * np.sqrt(_var(yl) / n)
    lab_lo, lab_hi = np.clip(yl.mean(1) - half_lab, 0, 1), np.clip(yl.mean(1) + half_lab, 0, 1)
    lab_w = lab_hi - lab_lo
    out: dict[str, Any] = {
        "judge": judge, "p": p, "N": big_n, "n": n,
        "judge_bias": round(float(f.mean() - p), 4),
        "labels_only_t": {"cover": round(float(((lab_lo <= p) & (p <= lab_hi)).mean()), 4)}}
    for method in METHODS:
        lo, hi, own_lo, own_hi = intervals(yl, fl, f, method)
        w, own_w = hi - lo, own_hi - own_lo
        share = np.where(lab_w > 0, w / np.where(lab_w > 0, lab_w, 1.0), 1.0)
        own = np.where(own_w > 0, w / np.where(own_w > 0, own_w, 1.0), 1.0)
        out[method] = {"cover": round(float(((lo <= p) & (p <= hi)).mean()), 4),
                       "cover_rows": round(float(((lo <= finite) & (finite <= hi)).mean()), 4),
                       "width": round(float(w.mean()), 4),
                       "share": round(float(share.mean()), 4),
                       "share_own": round(float(own.mean()), 4),
                       "labels_only_cover": round(float(((own_lo <= p) & (p <= own_hi)).mean()),
                                                  4)}
    return out


def summary(cells: list[dict[str, Any]], ns: list[int]) -> dict[str, Any]:
    """Per method and n: lowest / mean coverage over the cells, share of cells under 0.93, mean
    width share over the informative judges; also at p = 0.5 alone."""
    out: dict[str, Any] = {}
    for method in ("labels_only_t", *METHODS):
        out[method] = {}
        for n in ns:
            for tag, keep in (("all", lambda c: True), ("p0.5", lambda c: c["p"] == 0.5)):
                cs = [c for c in cells if c["n"] == n and keep(c)]
                if not cs:
                    continue
                cov = [c[method]["cover"] for c in cs]
                row = {"min_cover": min(cov), "mean_cover": round(float(np.mean(cov)), 4),
                       "cells_under_0.93": round(sum(v < 0.93 for v in cov) / len(cov), 3),
                       "cells": len(cs)}
                if method != "labels_only_t":
                    inf = [c[method] for c in cs if c["judge"] in INFORMATIVE]
                    row["width_share_informative"] = round(float(np.mean(
                        [c["share"] for c in inf])), 4)
                    row["width_share_own_informative"] = round(float(np.mean(
                        [c["share_own"] for c in inf])), 4)
                    worst = min(cs, key=lambda c: c[method]["cover"])
                    row["worst"] = f"{worst['judge']} p={worst['p']} N={worst['N']}"
                out[method][f"n={n} {tag}"] = row
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--n", default="10,25,50,100")
    parser.add_argument("--N", default="80,200,500,2000")
    parser.add_argument("--p", default="0.1,0.5,0.9")
    parser.add_argument("--judges", default=",".join(JUDGES))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--cells", action="store_true", help="print every cell, not only the "
                        "summary")
    args = parser.parse_args()
    ns = [int(x) for x in args.n.split(",")]
    started = time.time()
    cells = []
    k = 0
    for judge in args.judges.split(","):
        for p in (float(x) for x in args.p.split(",")):
            for big_n in (int(x) for x in args.N.split(",")):
                for n in ns:
                    if n < big_n:
                        k += 1
                        cells.append(cell(judge, p, big_n, n, args.draws, args.seed + k))
    out = {"draws": args.draws, "judges": JUDGES, "methods": list(METHODS),
           "mc_error_at_0.95": round(float(np.sqrt(0.95 * 0.05 / args.draws)), 4),
           "seconds": round(time.time() - started, 1), "summary": summary(cells, ns)}
    if args.cells:
        out["cells"] = cells
    json.dump(out, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
