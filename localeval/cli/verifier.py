"""``localeval verifier fit DATA --out HEAD.json``: learn a verifier head from labelled data;
``localeval verifier show HEAD.json``: what a head was made for and what it reached."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def add_parser(subparsers: Any) -> None:
    p = subparsers.add_parser("verifier", help="learn a verifier head from your own labels, or "
                                               "show one (localeval/docs/verifier.md)")
    sub = p.add_subparsers(dest="verifier_command", required=True)
    f = sub.add_parser("fit", help="fit a head on labelled rows or pairs (meta-eval formats), "
                                   "with k-fold figures before and after")
    f.add_argument("data", type=Path, help="labelled rows (label 0/1) or pairs, JSONL or JSON")
    f.add_argument("--out", type=Path, required=True, help="the head file to write")
    f.add_argument("--folds", type=int, default=5)
    f.add_argument("--layers", default="17,23", help="residual-stream layers (-1: final state)")
    f.add_argument("--C", type=float, default=0.05, help="inverse L2 strength")
    f.add_argument("--store", type=Path, help="where the activations are kept (default: "
                                              "beside --out)")
    f.add_argument("--config", type=Path, help="TOML file with settings (flags win)")
    f.add_argument("--profile", choices=["tiny", "small", "standard"])
    f.add_argument("--judge-model", type=Path)
    f.add_argument("--parallel", type=int)
    f.add_argument("--threads", dest="n_threads", type=int)
    f.add_argument("--n-ctx", type=int)
    f.add_argument("--n-gpu-layers", type=int)
    f.add_argument("--language", choices=["auto", "zh", "en"])
    f.add_argument("--json", action="store_true", help="print the figures as JSON")
    f.set_defaults(func=cmd_fit)
    s = sub.add_parser("show", help="a head's judge, templates, layers, τ and figures")
    s.add_argument("head", type=Path, help="a head file")
    s.set_defaults(func=cmd_show)


def _layers(text: str) -> list[int]:
    from localeval.errors import UsageError

    try:
        return [int(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise UsageError(f"--layers: expected comma-separated integers, got {text!r}") from None


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, tuple | list) and len(value) == 2 and all(
            isinstance(v, float) for v in value):
        return f"[{value[0]:.3f}, {value[1]:.3f}]"
    return "—" if value is None else str(value)


def cmd_fit(args: argparse.Namespace) -> int:
    from localeval.config import load_config
    from localeval.errors import UsageError
    from localeval.verifier.learn import learn

    if args.folds < 2:
        raise UsageError("--folds must be at least 2")
    overrides = {k: getattr(args, k) for k in ("profile", "judge_model", "parallel", "n_threads",
                                               "n_ctx", "n_gpu_layers", "language")}
    settings = load_config(args.config, overrides)
    figures = learn(args.data, args.out, settings, layers=_layers(args.layers),
                    folds=args.folds, C=args.C, store=args.store,
                    progress=lambda d, t: print(f"\rjudged {d}/{t} rows", end="",
                                                file=sys.stderr, flush=True))
    print(file=sys.stderr)
    if args.json:
        print(json.dumps(figures, ensure_ascii=False, indent=1, default=list))
        return 0
    for phase in ("before (raw P)", "after (head, held-out folds)"):
        shown = ", ".join(f"{k} {_fmt(v)}" for k, v in figures[phase].items())
        print(f"{phase}: {shown}")
    print(f"rows {figures['rows']}, claims {figures['claims']}, layers {figures['layers']}, "
          f"τ {figures['tau']}; head written to {args.out}")
    if figures["errors"]:
        print(f"{len(figures['errors'])} rows could not be judged: {figures['errors'][:5]}",
              file=sys.stderr)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    from localeval.verifier.head import load_head

    head = load_head(args.head)
    print(json.dumps({"id": head.id, "adopted": head.adopted, "judge_sha256": head.judge_sha256,
                      "templates": head.templates, "layers": head.layers, "tau": head.tau,
                      "trained_on": head.trained_on, "reached": head.reached},
                     ensure_ascii=False, indent=1))
    return 0
