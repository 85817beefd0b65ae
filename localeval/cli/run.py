"""`run`: evaluate a dataset into a run folder (or only estimate the run), then its gates."""

from __future__ import annotations

import argparse

from localeval.cli.common import gate_report, say, summary_table
from localeval.cli.estimate import check_flags as check_estimate_flags
from localeval.cli.estimate import cmd_estimate
from localeval.safe import terminal_safe


def cmd_run(args: argparse.Namespace) -> int:
    from localeval.config import load_config
    from localeval.distributed import options as ray_options
    from localeval.metrics import REGISTRY, resolve
    from localeval.results import gates
    from localeval.runner import run

    overrides = {
        k: getattr(args, k, None)
        for k in (
            "metrics",
            "profile",
            "judge",
            "judge_model",
            "embedder",
            "fake_answers",
            "language",
            "n_ctx",
            "n_threads",
            "n_gpu_layers",
            "parallel",
            "n_batch",
            "claims",
            "support_threshold",
            "max_tokens",
            "seed",
            "cache",
            "no_cache",
            "explain",
            "retrieval_at",
            "metric_options",
            "verifier",
        )
    }
    settings = load_config(args.config, overrides)
    chosen = None if settings.metrics is None else [m.name for m in resolve(settings.metrics)]
    fail_under = gates.parse_gates(args.fail_under, "--fail-under")
    gates.check_names(fail_under, REGISTRY, chosen)  # before any model is loaded
    check_estimate_flags(args)
    if args.estimate:
        return cmd_estimate(args, settings)
    outcome = run(
        args.data,
        args.out,
        settings,
        progress=not args.quiet,
        resume=args.resume,
        overwrite=args.overwrite,
        log=say,
        ray=ray_options.from_args(args),  # None: this process; else Ray workers
    )
    if not args.quiet:
        print(summary_table(outcome.summary))
        print(
            terminal_safe(
                f"results: {args.out / 'results.jsonl'}  summary: {args.out / 'summary.json'}  "
                f"report: {args.out / 'report.html'}"
            )
        )
    for rec in outcome.iter_records():  # one at a time: a run may hold 200,000
        for metric, reason in rec.errors.items():
            say(f"error: {rec.id} (line {rec.line}) {metric}: {reason}")
        if (
            settings.metrics is not None
        ):  # the user asked for these metrics: say where they could not run
            for metric, reason in rec.skipped.items():
                say(f"skipped: {rec.id} (line {rec.line}) {metric}: {reason}")
    failures = gates.check_fail_under(
        fail_under, outcome.summary, max_unscored=args.max_unscored,
        advisory_until_checked=args.advisory_until_checked, warn=say)
    return gate_report(failures, len(fail_under))
