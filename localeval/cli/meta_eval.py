"""``localeval meta-eval``: measure the judge's agreement with people on labelled data (or, with
--labels, correct a run's scores by human labels)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from localeval.cli.run import ESTIMATE_DESTS
from localeval.errors import UsageError
from localeval.safe import terminal_safe

# Options of `run` that meta-eval does not take over (it has its own data, --out, --metrics,
# --resume/--overwrite; gates and retrieval cutoffs do not apply).
NOT_SHARED = frozenset(
    {"help", "data", "out", "metrics", "resume", "overwrite", "fail_under", "max_unscored",
     "advisory_until_checked", "calibration",
     "retrieval_at", *ESTIMATE_DESTS}
)
NOT_SETTINGS = frozenset({"config", "quiet"})
USAGE = (
    "localeval meta-eval DATA --out DIR [--metrics A,B] [--score KEY] [--limit N] [--resume]\n"
    "           [run options: --profile, --judge-model, --parallel, --cache, --no-explain, "
    "--language, ...]\n"
    "       localeval meta-eval RUN_DIR --labels LABELS.jsonl [--json]"
)


def add_parser(subparsers: Any, run_parser: argparse.ArgumentParser) -> None:
    """Register `meta-eval`; the judge and run options are the very actions of `run_parser`."""
    p = subparsers.add_parser(
        "meta-eval",
        help="agreement of the judge with people: pairs or labelled rows (see "
        "localeval/docs/meta_eval.md)",
        usage=USAGE,
        description=(
            "Judge labelled data through the normal run path (answer cache, results folder, "
            "--resume) and report pairwise accuracy (ties count ½) with a bootstrap 95% CI, "
            "wins / ties / losses, AUROC (label) or Spearman / Kendall (human_score), per "
            "language, with seconds per sample; writes meta_eval.json, meta_eval.md and "
            "meta_eval.html into --out."
        ),
    )
    p.add_argument(
        "data",
        metavar="DATA",
        help="pairs or labelled rows (JSONL or a JSON list); with --labels, a run folder",
    )
    p.add_argument(
        "--out",
        type=Path,
        help="run folder to write (required, except with --labels)",
    )
    p.add_argument(
        "--labels",
        type=Path,
        metavar="FILE",
        help="DATA is a run folder: its judge scores corrected by these human labels "
        "(prediction-powered means with 95%% intervals; localeval/docs/labels.md); nothing "
        "is judged",
    )
    p.add_argument("--json", action="store_true",
                   help="with --labels: print the estimates as one JSON object")
    p.add_argument(
        "--metrics",
        type=lambda v: [x.strip() for x in v.split(",") if x.strip()],
        help="metrics to run (default: the metric of --score)",
    )
    p.add_argument(
        "--score",
        help="score key that decides, e.g. faithfulness, "
        "answer_correctness.f1 (default: the first metric)",
    )
    p.add_argument(
        "--limit",
        type=int,
        help="judge the first N pairs with a human preference (or the first N rows)",
    )
    again = p.add_mutually_exclusive_group()
    again.add_argument(
        "--resume",
        action="store_true",
        help="continue the meta-eval in --out (judged rows are kept)",
    )
    again.add_argument(
        "--overwrite",
        action="store_true",
        help="start over in an --out folder that already holds results",
    )
    shared = p.add_argument_group("run options (the same as `localeval run`)")
    for action in run_parser._actions:  # argparse has no public way to share an action
        if action.dest not in NOT_SHARED:
            shared._add_action(action)
    p.set_defaults(
        func=cmd_meta_eval,
        shared_dests=[
            a.dest for a in run_parser._actions if a.dest not in NOT_SHARED | NOT_SETTINGS
        ],
    )


def cmd_meta_eval(args: argparse.Namespace) -> int:
    if args.labels is not None:
        return cmd_labels(args)
    if args.json:
        raise UsageError("--json goes with --labels (meta-eval writes meta_eval.json itself)")
    if args.out is None:
        raise UsageError("the following arguments are required: --out")
    from localeval.config import load_config
    from localeval.meta_eval.run import evaluate
    from localeval.report.meta_eval_page import table

    overrides = {d: getattr(args, d, None) for d in args.shared_dests}
    overrides["metrics"] = args.metrics
    settings = load_config(args.config, overrides)
    outcome = evaluate(
        Path(args.data),
        args.out,
        settings,
        score=args.score,
        limit=args.limit,
        resume=args.resume,
        overwrite=args.overwrite,
        progress=not args.quiet,
        log=lambda msg: print(terminal_safe(msg), file=sys.stderr),
    )
    print(table(outcome.result))
    print(terminal_safe("meta-eval: " + "  ".join(str(f) for f in outcome.files)))
    if outcome.interrupted is not None:
        raise outcome.interrupted
    return 0


def cmd_labels(args: argparse.Namespace) -> int:
    """`meta-eval RUN_DIR --labels FILE [--json]`: the run's corrected estimates; judges
    nothing, so the judge and run options do not apply."""
    from localeval.cli.common import say, to_json
    from localeval.labels.estimate import estimate_run
    from localeval.labels.show import labels_table

    wrong = [flag for flag, given in (("--out", args.out), ("--limit", args.limit),
                                      ("--score", args.score), ("--metrics", args.metrics),
                                      ("--resume", args.resume), ("--overwrite", args.overwrite))
             if given]
    if wrong:
        raise UsageError(f"{', '.join(wrong)} do(es) not go with --labels (it reads the run "
                         "folder DATA and judges nothing)")
    estimates = estimate_run(Path(args.data), args.labels)
    for note in estimates.notes:
        say(f"note: {note}")
    if args.json:
        print(to_json(estimates.to_json()))
    else:
        for line in labels_table(estimates.to_json()).splitlines():
            print(terminal_safe(line))
    return 0

