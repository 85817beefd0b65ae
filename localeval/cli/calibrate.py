"""``localeval calibrate RUN_DIR [--labels FILE] --out calib.json``: fit τ for the run's judge
from human claim labels; ``localeval run --calibration calib.json`` uses it."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser(
        "calibrate", help="fit τ for the run's judge from human labels (localeval/docs/labels.md)",
        description="Fit τ, the P(supported) a claim needs, for the judge of a labelled run "
                    "(labels of any order: random and most-informative); write it with the "
                    "judge's sha256 and the templates' hashes to a calibration file that "
                    "`localeval run --calibration FILE` takes.")
    p.add_argument("run_dir", type=Path, metavar="RUN_DIR", help="the --out folder of a run")
    p.add_argument("--labels", type=Path, metavar="FILE",
                   help="the labels file (default: RUN_DIR/labels.jsonl)")
    p.add_argument("--out", type=Path, required=True, help="the calibration file to write")
    p.add_argument("--json", action="store_true", help="print the calibration as JSON")
    p.add_argument("--force", action="store_true",
                   help="write the calibration even when, out of fold on its labels, it agrees "
                        "worse or its mean is further from theirs than the τ it replaces")
    p.set_defaults(func=cmd_calibrate)


def cmd_calibrate(args: argparse.Namespace) -> int:
    from localeval.cli.common import say, to_json
    from localeval.labels.calibrate import (
        fit_calibration,
        taus_text,
        worse_than_replaced,
        write_calibration,
    )

    cal, notes = fit_calibration(args.run_dir, args.labels, args.out)
    for note in notes:
        say(f"note: {note}")
    worse = worse_than_replaced(cal)
    if worse is not None and not args.force:  # keep what it would replace
        say(f"localeval: refused: {worse}")
        return 1
    if worse is not None:
        say(f"warning: written with --force although {worse.split('; the calibration')[0]}")
    write_calibration(cal, args.out)
    if args.json:
        print(to_json(cal.model_dump()))
        return 0
    shipped = ", ".join(f"{k} {v}" for k, v in cal.default_tau.items())
    default = "-" if cal.default_agreement is None else f"{cal.default_agreement:.3f}"
    print(f"τ = {cal.tau} for {cal.judge.name} ({cal.judge.sha256[:12]}…), fitted on "
          f"{cal.n_answers} labelled answers ({cal.n_right} right) and {cal.n_claims} claim "
          f"labels ({cal.n_supported} supported): agreement {cal.agreement:.3f} (the shipped "
          f"τ, {shipped}: {default})")
    oof, old = cal.out_of_fold or {}, cal.replaces or {}
    print(f"out of fold ({oof.get('folds')} folds): agreement {_f(oof.get('replaced'))} before "
          f"({old.get('source')}: {taus_text(old.get('tau'))}), {_f(oof.get('fitted'))} after")
    mean = oof.get("mean") or {}
    if mean.get("labels") is not None:
        print(f"out of fold: the {mean.get('of')} {_f(mean.get('replaced'))} before (off by "
              f"{_f(mean.get('gap_replaced'))}), {_f(mean.get('fitted'))} after (off by "
              f"{_f(mean.get('gap_fitted'))}), against the labels' {_f(mean.get('labels'))}")
    if cal.answers_mean:
        m = cal.answers_mean
        print(f"labelled answers (in sample): mean label {_f(m.get('labels'))}; their mean "
              f"score {_f(m.get('replaced'))} before, {_f(m.get('fitted'))} after")
    print(f"written to {args.out}; use it with: localeval run DATA --out DIR "
          f"--calibration {args.out}")
    return 0


def _f(x: Any) -> str:
    return "-" if x is None else f"{x:.3f}"

