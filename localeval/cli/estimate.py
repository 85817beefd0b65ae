"""`run --estimate`: print how many judge requests and tokens a run would take, and how long,
without running it (localeval/estimate)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from localeval.cli.common import say, to_json
from localeval.config import Settings
from localeval.errors import UsageError
from localeval.safe import terminal_safe

ESTIMATE_DESTS = ("estimate", "json", "no_calibrate", "recalibrate")
"""The `run` options that belong to --estimate (not settings; meta-eval does not take them)."""


def add_arguments(run: argparse.ArgumentParser) -> None:
    group = run.add_argument_group("estimate (size the run without running it)")
    group.add_argument(
        "--estimate", action="store_true",
        help="print the judge requests, prompt and generated tokens and the time this run would "
             "take, without loading the judge (a first use measures this machine's judge speed "
             "once, cached beside the answer cache)")
    group.add_argument("--json", action="store_true",
                       help="with --estimate: print the estimate as JSON instead of a table")
    group.add_argument("--no-calibrate", action="store_true",
                       help="with --estimate: never load the judge; the time is given only from "
                            "a cached calibration")
    group.add_argument("--recalibrate", action="store_true",
                       help="with --estimate: measure this machine's judge speed again")


def check_flags(args: argparse.Namespace) -> None:
    """--json, --no-calibrate and --recalibrate only go with --estimate; --out is required
    except with --estimate (which writes nothing; with --resume it reads the folder)."""
    if args.out is None and (not args.estimate or args.resume):
        raise UsageError("the following arguments are required: --out")
    if not args.estimate:
        given = [f"--{d.replace('_', '-')}" for d in ESTIMATE_DESTS[1:] if getattr(args, d)]
        if given:
            raise UsageError(f"{', '.join(given)} only go(es) with --estimate")
    elif args.no_calibrate and args.recalibrate:
        raise UsageError("--no-calibrate and --recalibrate contradict each other")


def done_ids(out: Path) -> set[str]:
    """The ids an --out folder already holds (what --resume would skip)."""
    path = out / "results.jsonl"
    ids: set[str] = set()
    if not path.is_file():
        return ids
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            ids.add(str(json.loads(line)["id"]))
        except (ValueError, KeyError, TypeError, RecursionError):
            continue
    return ids


def cmd_estimate(args: argparse.Namespace, settings: Settings) -> int:
    from localeval.estimate.sizing import estimate_run
    from localeval.estimate.table import table
    from localeval.judge.lazy import resolve_parallel

    if getattr(args, "ray", None):
        raise UsageError("--estimate sizes a run in this process; leave out --ray")
    parallel = 1 if settings.judge == "fake" else resolve_parallel(settings.parallel,
                                                                    settings.n_gpu_layers)
    estimate = estimate_run(args.data, settings, parallel=parallel,
                            calibrate_now=not args.no_calibrate, recalibrate=args.recalibrate,
                            skip_ids=done_ids(args.out) if args.resume else None, log=say)
    text = to_json(estimate) if args.json else table(estimate)
    print("\n".join(terminal_safe(line) for line in text.splitlines()))
    return 0
