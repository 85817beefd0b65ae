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
    from localeval.estimate.sizing import estimate_parallel, estimate_run
    from localeval.estimate.table import table

    if getattr(args, "ray", None):
        raise UsageError("--estimate sizes a run in this process; leave out --ray")
    estimate = estimate_run(args.data, settings, parallel=estimate_parallel(settings),
                            calibrate_now=not args.no_calibrate, recalibrate=args.recalibrate,
                            skip_ids=done_ids(args.out) if args.resume else None, log=say)
    text = to_json(estimate) if args.json else table(estimate)
    print("\n".join(terminal_safe(line) for line in text.splitlines()))
    return 0
