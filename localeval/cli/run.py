"""`run`: evaluate a dataset into a run folder (or only estimate the run), then its gates (when
--fail-under gives any)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from localeval.cli.common import gate_report, say, summary_table
from localeval.errors import ConfigError, UsageError
from localeval.safe import terminal_safe

if TYPE_CHECKING:
    from localeval.distributed.executor import RayExecutor
    from localeval.results.gates import Gate

NOTHING_SCORED = 3
"""Exit status of a run in which no metric has a score on any sample."""
ESTIMATE_DESTS = ("estimate", "json", "no_calibrate", "recalibrate")
"""The `run` options that belong to --estimate (not settings; meta-eval does not take them)."""


def cmd_run(args: argparse.Namespace) -> int:
    from localeval.config import load_config
    from localeval.metrics import resolve
    from localeval.results.summary import scored_nothing
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
            "shield",
            "metrics_files",
        )
    }
    settings = load_config(args.config, overrides)
    record = None  # the calibration file's, for summary.json
    if args.calibration is not None:  # τ fitted for this judge from human labels
        from localeval.labels.calibrate import calibrated

        settings, _, record = calibrated(settings, args.calibration)
    chosen = None if settings.metrics is None else [
        m.name for m in resolve(settings.metrics, settings.rubrics)]
    fail_under = fail_under_gates(args.fail_under, chosen,  # before any model is loaded
                                  [r.name for r in settings.rubrics])
    check_flags(args)
    if settings.names_head():  # the verifier plug-in scores the verdicts
        import localeval.verifier  # noqa: F401
    if args.estimate:
        from localeval.cli.estimate import cmd_estimate

        return cmd_estimate(args, settings)
    outcome = run(
        args.data,
        args.out,
        settings,
        progress=not args.quiet,
        resume=args.resume,
        overwrite=args.overwrite,
        log=say,
        executor=ray_executor(args),  # None: this process
        calibration=record,
    )
    if (args.out / "labels.jsonl").exists():  # a labelled folder: its corrected figures again
        from localeval.labels.attach import refresh

        refresh(args.out, say)
    if not args.quiet:
        print(summary_table(outcome.summary))
        print(
            terminal_safe(
                f"results: {args.out / 'results.jsonl'}  summary: {args.out / 'summary.json'}  "
                f"report: {args.out / 'report.html'}"
            )
        )
    why: dict[str, str] = {}  # metric → one sample's error or skip reason
    for rec in outcome.iter_records():  # one at a time: a run may hold 200,000
        for metric, reason in rec.errors.items():
            say(f"error: {rec.id} (line {rec.line}) {metric}: {reason}")
            why.setdefault(metric, f"error: {reason}")
        for metric, reason in rec.skipped.items():
            why.setdefault(metric, f"skipped: {reason}")
            if settings.metrics is not None:  # asked for: say where it could not run
                say(f"skipped: {rec.id} (line {rec.line}) {metric}: {reason}")
    calibration = outcome.summary.get("calibration") or {}
    if calibration.get("calibrated") is False:  # τ was fitted for another judge: said last
        say(f"note: {calibration.get('note')}")
    nothing = scored_nothing(outcome.summary, why)
    if nothing is not None:  # a run that scored nothing is no pass (the results are saved)
        say(f"error: {nothing}; the results are in {args.out}")
        return NOTHING_SCORED
    if not fail_under:
        return 0
    from localeval.results.gates import check_fail_under

    failures = check_fail_under(
        fail_under, outcome.summary, max_unscored=args.max_unscored,
        advisory_until_checked=args.advisory_until_checked, warn=say)
    return gate_report(failures, len(fail_under))


def fail_under_gates(specs: list[str] | None, chosen: list[str] | None,
                     rubrics: list[str] | None = None) -> list[Gate]:
    """The --fail-under gates, each naming a score this run computes (results/gates.py), a
    built-in metric's or a rubric's; none without the flag, and then the run never reads the
    gates module."""
    if not specs:
        return []
    from localeval.metrics import REGISTRY
    from localeval.results.gates import check_names, parse_gates

    gates = parse_gates(specs, "--fail-under", say)
    check_names(gates, [*REGISTRY, *(rubrics or [])], chosen)
    return gates


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


def ray_executor(args: argparse.Namespace) -> RayExecutor | None:
    """The Ray plug-in's executor from the --ray flags, or None without --ray (the other
    --ray-* flags alone are an error). The plug-in is imported only when --ray is given."""
    extra = {
        "workers": args.ray_workers,
        "cpus_per_worker": args.ray_cpus_per_worker,
        "models_dir": args.ray_models,
    }
    given = {k: v for k, v in extra.items() if v is not None}
    if args.ray is None:
        if given:
            raise ConfigError("--ray-workers, --ray-cpus-per-worker and --ray-models need --ray")
        return None
    from localeval.distributed.executor import ray_executor

    return ray_executor({"address": args.ray, **given})
