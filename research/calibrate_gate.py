# ruff: noqa: E402  (a research script: it puts scripts/ on sys.path before its imports)
"""What `localeval calibrate` hands a user, out of fold (issue 53, item 15): per draw, the answers
of random pairs (50 labels) of a meta-eval run are labelled, calibrate's fit and gate run on them
(replacing the shipped τ), and the held-out pairs are scored at the τ the user ends with (the
fitted one when written, else the shipped one): held-out pairwise accuracy and |mean score − mean
label|. The same with the code before (calibrate.py of `main`, archived to OLD_TREE).

    git archive main | tar -x -C /tmp/oldtree
    PYTHONPATH=. python research/calibrate_gate.py 400 RUN_DIR PAIRS /tmp/oldtree
"""

import random
import statistics
import sys

N, RUN, PAIRS, OLD = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
sys.argv = ["x"]
sys.path.insert(0, "scripts")
sys.path.insert(0, ".")
import ppi_coverage as pc

from localeval.labels import calibrate as c
from localeval.metrics.claims.verdicts import FITTED

_, rows = pc.load_set(f"h={RUN}:{PAIRS}", "faithfulness")
pairs = {}
for r in rows:
    pairs.setdefault(r["id"].rpartition("/")[0], []).append(r)


def draw(rng: random.Random, names: list) -> tuple[list, list]:
    """One draw: whole pairs, in a shuffled order, until 50 labels; the rest held out."""
    rng.shuffle(names)
    train, k = [], 0
    while len(train) < 50:
        train += pairs[names[k]]
        k += 1
    return train, [r for n in names[k:] for r in pairs[n]]


names = sorted(pairs)
rng = random.Random(0)
prefer = FITTED["zh"]
out = {"written": 0, "refused_agreement": 0, "refused_mean": 0, "refused_both": 0}
kept = []
for _d in range(N):
    train, test = draw(rng, names)
    units = []
    for r in train:
        s = (r["claims"], float(r["y"]), r["language"])
        units.append(c.Unit(r["id"], pc.points_of([r]), [s]))
    pts = [x for u in units for x in u.points]
    sm = [x for u in units for x in u.samples]
    try:
        tau, _ = c.choose_tau(pts, prefer, sm)
    except Exception:
        continue
    o = c.out_of_fold(units, prefer, dict(FITTED))
    a0 = c.agreement(pts, sm, dict(FITTED))
    g0 = c.mean_gap(pts, sm, dict(FITTED))
    worse_a = round(o.agreement, 4) < round(a0, 4)
    worse_m = round(o.gap, 4) > round(g0, 4)
    key = (
        "written"
        if not (worse_a or worse_m)
        else "refused_both"
        if worse_a and worse_m
        else "refused_agreement"
        if worse_a
        else "refused_mean"
    )
    out[key] += 1
    used = tau if key == "written" else dict(FITTED)
    f = pc.agreement(test, used)
    f["gap"] = abs(pc.held_out_gap(test, used))
    kept.append(f)
print(out)
print(
    "held out, what the user runs with (fitted when written, else shipped): pairwise",
    round(statistics.fmean(x["pairwise"] for x in kept), 4),
    "mean |gap|",
    round(statistics.fmean(x["gap"] for x in kept), 4),
)

import importlib.util

spec = importlib.util.spec_from_file_location("oldcal", f"{OLD}/localeval/labels/calibrate.py")
old = importlib.util.module_from_spec(spec)
sys.modules["oldcal"] = old
spec.loader.exec_module(old)
rng = random.Random(0)
names = sorted(pairs)
out = {"written": 0, "refused": 0}
kept = []
moved = 0
for _d in range(N):
    train, test = draw(rng, names)
    units = [
        old.Unit(r["id"], pc.points_of([r]), [(r["claims"], int(r["y"] == 1), r["language"])])
        for r in train
    ]
    pts = [x for u in units for x in u.points]
    sm = [x for u in units for x in u.samples]
    try:
        tau, _ = old.choose_tau(pts, prefer, sm)
    except Exception:
        continue
    oof, _ = old.out_of_fold(units, prefer, dict(FITTED))
    a0 = old.agreement(pts, sm, dict(FITTED))
    w = not (round(oof, 4) < round(a0, 4))
    out["written" if w else "refused"] += 1
    if w and c.mean_gap(pts, [(e, float(y), g) for e, y, g in sm], tau) > c.mean_gap(
        pts, [(e, float(y), g) for e, y, g in sm], dict(FITTED)
    ):
        moved += 1
    used = tau if w else dict(FITTED)
    f = pc.agreement(test, used)
    f["gap"] = abs(pc.held_out_gap(test, used))
    kept.append(f)
print("old code:", out, "written with the labels' mean further off in sample:", moved)
print(
    "held out, old code: pairwise",
    round(statistics.fmean(x["pairwise"] for x in kept), 4),
    "mean |gap|",
    round(statistics.fmean(x["gap"] for x in kept), 4),
)
