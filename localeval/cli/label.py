"""`localeval label RUN_DIR`: the labelling page on 127.0.0.1 (localeval/docs/label.md);
`localeval label TESTSET.jsonl`: the same page reviewing a test set made by `generate`."""

from __future__ import annotations

import argparse
from pathlib import Path

from localeval.cli.common import say


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("label", help="label a run's claims or samples in a local browser page, "
                                     "or review a generated test set (localeval/docs/label.md)")
    p.add_argument("target", type=Path, help="a run folder (the --out of `localeval run`), or "
                                             "a test set (.jsonl) made by `localeval generate`")
    p.add_argument("--port", type=int, default=0,
                   help="port on 127.0.0.1 (default 0: a free one, printed)")
    p.add_argument("--seed", type=int, help="seed of the random order (default: the one the "
                   "labels file was labelled with, else 0)")
    p.add_argument("--who", help="your name, written with every mark (default: the login name)")
    p.add_argument("--metric", help="the metric to label first (default: faithfulness if the "
                                    "run scored it, else its first judge metric)")
    p.add_argument("--data", type=Path, help="the run's dataset, when it is no longer where "
                                             "the run read it (the contexts are shown from it)")
    p.add_argument("--write-kept", action="store_true",
                   help="test set: write the kept rows (TESTSET.kept.jsonl) and exit, no page")
    p.add_argument("--unreviewed", action="store_true",
                   help="with --write-kept: keep the rows not reviewed yet too")
    p.set_defaults(func=cmd_label)


def cmd_label(args: argparse.Namespace) -> int:
    from localeval.errors import UsageError
    from localeval.labelpage.session import default_who

    if not 0 <= args.port <= 65535:
        raise UsageError(f"--port {args.port}: a port is 0 to 65535 (0: a free one)")
    who = args.who or default_who()
    target: Path = args.target
    if target.is_dir():
        if args.write_kept or args.unreviewed:
            raise UsageError("--write-kept and --unreviewed are for a test set, not a run folder")
        from localeval.labelpage.session import RunSession

        session = RunSession(target, seed=args.seed, who=who, data=args.data)
        metric = args.metric or ("faithfulness" if "faithfulness" in session.metrics
                                 else session.metrics[0])
        session.view(metric)  # an unknown --metric is refused here, in one line
        session.metrics.remove(metric)
        session.metrics.insert(0, metric)  # the page opens on it
    elif target.is_file() or target.suffix == ".jsonl":
        for flag in ("seed", "metric", "data"):
            if getattr(args, flag) is not None:
                raise UsageError(f"--{flag} is for a run folder, not a test set")
        from localeval.labelpage.review import ReviewSession

        review = ReviewSession(target, who=who)
        if args.write_kept:
            wrote = review.write_kept(unreviewed=args.unreviewed)
            say(f"wrote {wrote['rows']} row(s) to {wrote['path']} ({wrote['accept']} accepted, "
                f"{wrote['edit']} edited, {wrote['reject']} rejected, {wrote['undecided']} not "
                "reviewed yet)")
            return 0
        session = review
    else:
        raise UsageError(f"{target} not found; give a run folder or a test set (.jsonl)")
    if args.unreviewed or args.write_kept:
        raise UsageError("--unreviewed goes with --write-kept")
    return serve(session, args.port)


def serve(session: object, port: int) -> int:
    from localeval.labelpage.server import LabelServer

    server = LabelServer(session, port)  # type: ignore[arg-type]
    for note in getattr(session, "notes", []):
        say(f"note: {note}")
    path = getattr(session, "path", None)
    print(f"labelling page: {server.url} (marks go to {path}; Ctrl-C stops)", flush=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        say("labelling page stopped; every mark is in the file")
    finally:
        server.server_close()
    return 0
