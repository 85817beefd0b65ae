"""Does the prediction-powered interval cover the truth, and is it narrower? Prints JSON.

Each SET is a `localeval meta-eval` run folder of dev data with the file it judged: pairs (the
preferred answer's label 1, the other's 0: right answer vs hallucinated) or labelled rows (their
`label`). The dev sets play the person. Per set and pooled: the truth is the mean label over the
rows the judge scored (N); for n = 25, 50, 100 (< N) the script draws n rows uniformly at random
`--draws` times, gives their labels to `ppi_mean` and counts how often the 95 % interval covers
the truth, the interval's width as a share of the labels-only one, and the judge-only mean's bias;
with `--resample N` also on populations of N rows drawn with replacement from the set's rows (its
joint distribution of judge score and label), where n = 100 fits. `before` gives the same
figures for the plug-in interval ppi.py computed until the pseudo-labels were added (no
pseudo-labels, both intervals), on the same draws (scripts/ppi_small_sample.py `plugin_t`).

With `--tau SET...` it also fits τ from the answers of random pairs, `--tau-labels` answers in
all (sample labels: a right answer marks its claims supported, a hallucinated one-claim answer
its claim not), by each rule of RULES, and measures, on the pairs not drawn, the pairwise
accuracy (preferred answer scored higher; ties ½), the answer-level balanced accuracy (score 1
vs label) and the gap between the held-out answers' mean score and their mean label, at each
fitted τ and at the shipped τ (metrics/claims/verdicts.FITTED), over `--tau-draws` draws: out
of fold.

    python scripts/ppi_coverage.py --metric faithfulness \\
        --set halueval=runs/halueval:runs/pairs/halueval.jsonl ... \\
        [--pool halueval ...] [--resample 400] [--tau halueval halluqa]
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

from localeval.errors import LabelsError
from localeval.labels.calibrate import GRID, choose_tau, mean_gap, score_at
from localeval.labels.calibrate import agreement as agreement_of
from localeval.labels.ppi import ppi_mean
from localeval.metrics.claims.verdicts import FITTED
from localeval.results import read_results

sys.path.insert(0, str(Path(__file__).resolve().parent))
from ppi_small_sample import intervals  # the plug-in interval, for `before`


def truths(data: Path) -> dict[str, float]:
    """Row id → its label: pairs give `<pair_id>/<side>` 1 for the preferred side, else 0;
    labelled rows give their `label` under their `id`."""
    out: dict[str, float] = {}
    for line in data.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        if "preferred" in row:
            if row["preferred"] in ("a", "b"):
                for side in ("a", "b"):
                    out[f"{row['pair_id']}/{side}"] = float(side == row["preferred"])
        elif "label" in row and "id" in row:
            out[str(row["id"])] = float(row["label"])
    return out


def load_set(spec: str, metric: str) -> tuple[str, list[dict[str, Any]]]:
    """NAME=RUN_DIR:DATA → (NAME, rows: id, judge score f, label y, claims, language)."""
    name, _, rest = spec.partition("=")
    run_dir, _, data = rest.rpartition(":")
    labels = truths(Path(data))
    rows = []
    for r in read_results(Path(run_dir) / "results.jsonl").records:
        score = r.scores.get(metric)
        if score is None or r.id not in labels:
            continue
        detail = r.details.get(metric) or {}
        rows.append({"id": r.id, "f": float(score), "y": labels[r.id], "language": r.language,
                     "claims": detail.get("statements") or [], "set": name})
    return name, rows


def coverage(rows: list[dict[str, Any]], ns: list[int], draws: int, seed: int,
             resample: int | None = None) -> dict[str, Any]:
    """Per n: coverage of the truth by the PPI and labels-only intervals, their widths, λ.
    Without `resample` the rows are the population and the truth their mean label; with it each
    draw makes a population of `resample` rows drawn with replacement from the rows (their joint
    distribution of judge score and label) and the truth is the rows' mean label."""
    truth = statistics.fmean(r["y"] for r in rows)
    judge = statistics.fmean(r["f"] for r in rows)
    size = resample or len(rows)
    out: dict[str, Any] = {"n_rows": len(rows), "true_mean": round(truth, 4),
                           "judge_mean": round(judge, 4), "judge_bias": round(judge - truth, 4),
                           "population": f"{size} rows drawn with replacement per draw"
                           if resample else "the rows themselves", "by_n": {}}
    rng = random.Random(seed)
    for n in ns:
        if n >= size:
            out["by_n"][str(n)] = f"n ≥ N ({size} rows): not drawn"
            continue
        covered = covered_labels = covered_before = 0
        widths, ratios, lams, ratios_before = [], [], [], []
        for _ in range(draws):
            pop = [rows[rng.randrange(len(rows))] for _ in range(size)] if resample else rows
            f_all = [r["f"] for r in pop]
            idx = rng.sample(range(size), n)
            e = ppi_mean(f_all, [f_all[i] for i in idx], [pop[i]["y"] for i in idx])
            covered += e.ci[0] <= truth <= e.ci[1]
            covered_labels += e.labels_only_ci[0] <= truth <= e.labels_only_ci[1]
            width = e.labels_only_ci[1] - e.labels_only_ci[0]
            widths.append(e.ci[1] - e.ci[0])
            ratios.append((e.ci[1] - e.ci[0]) / width if width > 0 else 1.0)
            lams.append(e.lam)
            y = np.array([[pop[i]["y"] for i in idx]])
            lo, hi, lab_lo, lab_hi = intervals(y, np.array([[f_all[i] for i in idx]]),
                                               np.array([f_all]), "plugin_t")
            covered_before += bool(lo[0] <= truth <= hi[0])
            width = float(lab_hi[0] - lab_lo[0])
            ratios_before.append(float(hi[0] - lo[0]) / width if width > 0 else 1.0)
        out["by_n"][str(n)] = {
            "draws": draws, "coverage": round(covered / draws, 4),
            "labels_only_coverage": round(covered_labels / draws, 4),
            "mean_width": round(statistics.fmean(widths), 4),
            "width_share_of_labels_only": round(statistics.fmean(ratios), 4),
            "narrower_share": round(sum(r < 1 - 1e-12 for r in ratios) / draws, 4),
            "mean_lambda": round(statistics.fmean(lams), 4),
            "before": {"coverage": round(covered_before / draws, 4),
                       "width_share_of_labels_only": round(statistics.fmean(ratios_before), 4)}}
    return out


def points_of(rows: list[dict[str, Any]]) -> list[tuple[float, int, str]]:
    """(P, label, language) of the claims sample labels can mark (calibrate.claim_points)."""
    out = []
    for r in rows:
        judged = [c for c in r["claims"] if c.get("rule", "judge") == "judge"
                  and c.get("p_supported") is not None]
        if r["y"] == 1:
            out += [(float(c["p_supported"]), 1, r["language"]) for c in judged]
        elif r["y"] == 0 and len(r["claims"]) == 1 and judged:
            out.append((float(judged[0]["p_supported"]), 0, r["language"]))
    return out


def agreement(rows: list[dict[str, Any]], tau: float | dict[str, float]) -> dict[str, float]:
    """Pairwise accuracy over the complete pairs among `rows`, and answer-level balanced
    accuracy of (score = 1) against the label."""
    by_pair: dict[str, dict[str, dict[str, Any]]] = {}
    for r in rows:
        pair, _, side = r["id"].rpartition("/")
        by_pair.setdefault(pair, {})[side] = r
    wins = 0.0
    pairs = 0
    for sides in by_pair.values():
        good = [r for r in sides.values() if r["y"] == 1]
        bad = [r for r in sides.values() if r["y"] == 0]
        if len(good) == 1 and len(bad) == 1:
            a = score_at(good[0]["claims"], tau, good[0]["language"])
            b = score_at(bad[0]["claims"], tau, bad[0]["language"])
            pairs += 1
            if a is not None and b is not None:
                wins += 1.0 if a > b else 0.5 if a == b else 0.0
    scored = [(score_at(r["claims"], tau, r["language"]), r["y"]) for r in rows]
    pos = [s == 1 for s, y in scored if s is not None and y == 1]
    neg = [s != 1 for s, y in scored if s is not None and y == 0]
    return {"pairwise": wins / pairs if pairs else float("nan"),
            "balanced_accuracy": 0.5 * (statistics.fmean(pos) + statistics.fmean(neg))
            if pos and neg else float("nan")}


def platt_tau(points: list[tuple[float, int, str]], prefer: float) -> float:
    """Platt scaling on the claims: σ(a·logit P + b) fitted by maximum likelihood (Newton, a
    tiny ridge), and the τ where it crosses ½ (P ≥ τ ⇔ calibrated P ≥ ½), on calibrate's
    grid; `prefer` when the fit is flat or falling."""
    p = np.clip(np.array([x for x, _, _ in points]), 1e-6, 1 - 1e-6)
    y = np.array([float(v) for _, v, _ in points])
    X = np.stack([np.log(p / (1 - p)), np.ones_like(p)], axis=1)
    w = np.zeros(2)
    for _ in range(50):
        q = 1 / (1 + np.exp(-X @ w))
        hess = X.T @ (X * (q * (1 - q))[:, None]) + 1e-6 * np.eye(2)
        w -= np.linalg.solve(hess, X.T @ (q - y) + 1e-6 * w)
    if w[0] <= 1e-9:
        return prefer
    cut = float(1 / (1 + np.exp(w[1] / w[0])))
    return min(GRID, key=lambda t: abs(t - cut))


RULES = ("agreement", "agreement-gap", "mean", "platt")
"""How τ is fitted: best agreement (calibrate before issue 53's item 15), best agreement less
the mean's gap (calibrate.choose_tau now), the smallest gap (ties: agreement), Platt scaling."""


def fit_rule(rule: str, points: list[tuple[float, int, str]],
             samples: list[tuple[list[dict[str, Any]], float, str]], prefer: float) -> float:
    if rule == "agreement-gap":
        return choose_tau(points, prefer, samples)[0]
    if agreement_of(points, samples, 0.5) is None:
        raise LabelsError("one kind of label only")
    if rule == "agreement":
        return max(GRID, key=lambda t: (agreement_of(points, samples, t), -abs(t - prefer)))
    if rule == "mean":
        return max(GRID, key=lambda t: (-round(mean_gap(points, samples, t), 9),
                                        agreement_of(points, samples, t), -abs(t - prefer)))
    return platt_tau(points, prefer)


def held_out_gap(rows: list[dict[str, Any]], tau: float | dict[str, float]) -> float:
    """|mean score − mean label| of the held-out answers at τ (signed: score − label)."""
    scored = [(x, r["y"]) for r in rows
              if (x := score_at(r["claims"], tau, r["language"])) is not None]
    return statistics.fmean(x for x, _ in scored) - statistics.fmean(y for _, y in scored)


def tau_out_of_fold(rows: list[dict[str, Any]], n_labels: int, draws: int, seed: int
                    ) -> dict[str, Any]:
    """Per draw: the answers of random pairs, n_labels in all, are labelled and τ fitted on
    them by each rule of RULES; the other pairs are the held-out ones the fitted and the
    shipped τ are measured on: pairwise accuracy, balanced accuracy, and the gap between the
    held-out answers' mean score and their mean label (mean |gap| over draws, and the mean
    signed gap)."""
    pairs: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        pairs.setdefault(r["id"].rpartition("/")[0], []).append(r)
    names = sorted(pairs)
    rng = random.Random(seed)
    prefer = sum(FITTED.values()) / len(FITTED)
    found: dict[str, list[dict[str, float]]] = {rule: [] for rule in (*RULES, "shipped")}
    taus: dict[str, list[float]] = {rule: [] for rule in RULES}
    skipped = 0
    for _ in range(draws):
        rng.shuffle(names)
        train: list[dict[str, Any]] = []
        k = 0
        while k < len(names) and len(train) < n_labels:
            train += pairs[names[k]]
            k += 1
        test = [r for name in names[k:] for r in pairs[name]]
        samples = [(r["claims"], float(r["y"]), r["language"]) for r in train]
        try:
            fitted = {rule: fit_rule(rule, points_of(train), samples, prefer) for rule in RULES}
        except LabelsError:  # a draw without both kinds of claim
            skipped += 1
            continue
        for rule, tau in [*fitted.items(), ("shipped", dict(FITTED))]:
            figures = agreement(test, tau)
            figures["gap"] = held_out_gap(test, tau)
            found[rule].append(figures)
            if rule in taus:
                taus[rule].append(tau)  # type: ignore[arg-type]

    def mean(xs: list[dict[str, float]], key: str, absolute: bool = False) -> float:
        return round(statistics.fmean(abs(x[key]) if absolute else x[key] for x in xs), 4)

    return {"answers": len(rows), "pairs": len(names), "labels_fitted_on": n_labels,
            "draws": draws - skipped, "draws_without_both_kinds": skipped,
            "held_out_pairs_per_draw": len(names) - -(-n_labels // 2),
            "tau_shipped": dict(FITTED),
            "rules": {rule: {
                **({"tau": {"mean": round(statistics.fmean(taus[rule]), 3),
                            "min": min(taus[rule]), "max": max(taus[rule])}}
                   if rule in taus else {}),
                "held_out_pairwise": mean(xs, "pairwise"),
                "held_out_balanced_accuracy": mean(xs, "balanced_accuracy"),
                "held_out_mean_abs_gap": mean(xs, "gap", absolute=True),
                "held_out_mean_signed_gap": mean(xs, "gap")}
                for rule, xs in found.items()}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", action="append", default=[], metavar="NAME[@KEY]=RUN_DIR:DATA",
                        help="a meta-eval run folder and the dev file it judged (repeatable; "
                             "a NAME given twice joins its rows)")
    parser.add_argument("--metric", default="faithfulness",
                        help="the score key (NAME@KEY in --set overrides it per set)")
    parser.add_argument("--n", default="25,50,100")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--resample", type=int, default=400, metavar="N",
                        help="also: populations of N rows drawn with replacement from each "
                             "set's rows, for n the rows alone cannot give (0: off)")
    parser.add_argument("--pool", nargs="*", metavar="NAME",
                        help="the sets pooled (default: all)")
    parser.add_argument("--tau", nargs="*", metavar="NAME", help="sets to fit τ on, pooled")
    parser.add_argument("--tau-labels", type=int, default=60)
    parser.add_argument("--tau-draws", type=int, default=200)
    args = parser.parse_args()
    ns = [int(x) for x in args.n.split(",")]
    sets: dict[str, list[dict[str, Any]]] = {}
    for spec in args.set:
        head, _, tail = spec.partition("=")
        name, _, metric = head.partition("@")
        rows = load_set(f"{name}={tail}", metric or args.metric)[1]
        sets[name] = sets.get(name, []) + rows  # a NAME given twice: its rows together
    out: dict[str, Any] = {"draws": args.draws, "alpha": 0.05, "sets": {}}
    pool = args.pool if args.pool is not None else list(sets)
    groups = {**sets, "pooled": [r for name in pool for r in sets[name]]}
    for k, (name, rows) in enumerate(groups.items()):
        out["sets"][name] = {"rows": coverage(rows, ns, args.draws, args.seed + k)}
        if args.resample:
            out["sets"][name]["resampled"] = coverage(rows, ns, args.draws, args.seed + 50 + k,
                                                      args.resample)
    out["sets"]["pooled"]["sets"] = pool
    if args.tau:
        rows = [r for name in args.tau for r in sets[name]]
        out["tau"] = tau_out_of_fold(rows, args.tau_labels, args.tau_draws, args.seed)
        out["tau"]["sets"] = args.tau
    json.dump(out, sys.stdout, indent=1, ensure_ascii=False)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
