"""``localeval retrieval``: score a TREC run file against TREC qrels, like trec_eval -c."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from typing import Any, TextIO

from localeval.errors import LocalevalError
from localeval.retrieval import (
    DEFAULT_GAIN,
    GAINS,
    IDEALS,
    RETRIEVAL_METRICS,
    RetrievalOptionError,
    RetrievalReport,
    check_options,
    evaluate_report,
)
from localeval.retrieval.trec import read_qrels, read_run
from localeval.safe import terminal_safe

_ALL = ("retrieval", "all")
_NAMES_SHOWN = 10


def add_parser(subparsers: Any) -> None:
    """Register the ``retrieval`` subcommand on an argparse subparsers object."""
    p = subparsers.add_parser(
        "retrieval",
        help="score a TREC run file against TREC qrels (no model needed)",
        description=(
            "Score a TREC run (qid Q0 docid rank score tag) against TREC qrels "
            "(qid iter docid grade). The run is ranked by score, ties broken by docid "
            "descending, as trec_eval does; queries of the qrels missing from the run score 0 "
            "(trec_eval -c); queries without a relevant doc are not scored and are named."
        ),
    )
    p.add_argument("--qrels", required=True, metavar="FILE", dest="retrieval_qrels")
    p.add_argument("--run", required=True, metavar="FILE", dest="retrieval_run")
    p.add_argument(
        "--metrics",
        default="retrieval",
        dest="retrieval_metrics",
        metavar="A,B",
        help=f"comma-separated, from: {', '.join(RETRIEVAL_METRICS)} ('retrieval' = all)",
    )
    p.add_argument(
        "--at", default="", dest="retrieval_at", metavar="K,K", help="cutoffs, e.g. 5,10"
    )
    p.add_argument(
        "--gain",
        choices=GAINS,
        default=DEFAULT_GAIN,
        dest="retrieval_gain",
        help="ndcg gain of a grade g: linear g (trec_eval, default) or exponential 2^g-1",
    )
    p.add_argument(
        "--ideal",
        choices=IDEALS,
        default="all",
        dest="retrieval_ideal",
        help="ndcg ideal ranking over all relevant docs (trec_eval, default) or only as many "
        "positions as were retrieved",
    )
    p.add_argument(
        "--per-query", action="store_true", dest="retrieval_per_query", help="show every query"
    )
    p.add_argument("--json", metavar="OUT", dest="retrieval_json", help="write the JSON here")
    p.add_argument(
        "--format",
        choices=("table", "json"),
        default="table",
        dest="retrieval_format",
        help="what to print on stdout",
    )
    p.set_defaults(func=run_retrieval)


def _parse_metrics(text: str) -> tuple[str, ...]:
    names = [m.strip() for m in text.split(",") if m.strip()]
    if not names:
        raise RetrievalOptionError("--metrics is empty")
    out: list[str] = []
    for m in names:
        out.extend(RETRIEVAL_METRICS if m in _ALL else (m,))
    return tuple(out)


def _parse_at(text: str) -> tuple[int, ...]:
    out: list[int] = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        try:
            out.append(int(part))
        except ValueError:
            raise RetrievalOptionError(f"--at: {part!r} is not a positive integer") from None
    return tuple(out)


def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.4f}"


def _table(rows: Sequence[Sequence[str]], out: TextIO) -> None:
    """Print rows as columns: the first left-aligned, the others right-aligned."""
    from localeval.report.kit import text_table

    for line in text_table(rows, right=range(1, len(rows[0]))):
        out.write(line + "\n")


def _queries(n: int) -> str:
    return f"{n} query" if n == 1 else f"{n} queries"


def _names(qids: Sequence[str]) -> str:
    shown = ", ".join(qids[:_NAMES_SHOWN])
    more = len(qids) - _NAMES_SHOWN
    return shown + (f", … and {more} more" if more > 0 else "")


def print_report(report: RetrievalReport, per_query: bool, out: TextIO) -> None:
    """The summary table (and every query with ``per_query``)."""
    rows = [["metric", "mean", "queries"]]
    rows += [[n, _fmt(report.means[n]), str(report.scored)] for n in report.names]
    _table(rows, out)
    if per_query:
        out.write("\n")
        q_rows = [["query", *report.names]]
        q_rows += [[q, *(_fmt(s[n]) for n in report.names)] for q, s in report.per_query.items()]
        _table(q_rows, out)


def report_json(report: RetrievalReport, args: argparse.Namespace, duplicates: int) -> dict:
    """The JSON document written by ``--json`` / ``--format json``."""
    doc: dict[str, Any] = {
        "qrels": args.retrieval_qrels,
        "run": args.retrieval_run,
        "metrics": report.names,
        "gain": args.retrieval_gain,
        "ideal": args.retrieval_ideal,
        "means": report.means,
        "scored": report.scored,
        "skipped_no_relevant": report.skipped,
        "missing_from_run_scored_0": report.missing,
        "not_in_qrels_ignored": report.unjudged,
        "repeated_ids_in_run": duplicates,
    }
    if args.retrieval_per_query:
        doc["per_query"] = report.per_query
    return doc


def run_retrieval(args: argparse.Namespace) -> int:
    """Handler of ``localeval retrieval``; returns the exit code (2 on bad input)."""
    err = sys.stderr
    try:
        metrics, at = check_options(
            _parse_metrics(args.retrieval_metrics),
            _parse_at(args.retrieval_at),
            args.retrieval_gain,
            args.retrieval_ideal,
        )
        qrels = read_qrels(args.retrieval_qrels)
        run = read_run(args.retrieval_run)
        report = evaluate_report(
            qrels,
            run.scores,
            metrics=metrics,
            at=at,
            gain=args.retrieval_gain,
            ideal=args.retrieval_ideal,
        )
    except LocalevalError as exc:
        _say(err, f"error: {exc}")
        return 2
    if report.skipped:
        _say(err, f"note: {_queries(len(report.skipped))} without a relevant doc, not scored: "
            f"{_names(report.skipped)}")
    if report.missing:
        _say(err, f"note: {_queries(len(report.missing))} of the qrels missing from the run, "
            f"scored 0: {_names(report.missing)}")
    if report.unjudged:
        _say(err, f"note: {_queries(len(report.unjudged))} of the run not in the qrels, "
            f"ignored: {_names(report.unjudged)}")
    if run.duplicates:
        line, qid, doc = run.duplicates[0]
        _say(err, f"warning: {len(run.duplicates)} repeated docids in the run, each kept at its "
             f"best rank (first: line {line}, query {qid}, doc {doc})")
    doc = report_json(report, args, len(run.duplicates))
    if args.retrieval_json:
        try:
            with open(args.retrieval_json, "w", encoding="utf-8") as fh:
                json.dump(doc, fh, ensure_ascii=False, indent=2)
                fh.write("\n")
        except OSError as exc:
            _say(err, f"error: cannot write {args.retrieval_json}: {exc}")
            return 2
    if args.retrieval_format == "json":
        json.dump(doc, sys.stdout, ensure_ascii=False, indent=2)
        sys.stdout.write("\n")
    else:
        print_report(report, args.retrieval_per_query, sys.stdout)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Stand-alone entry point: ``python -m localeval.cli.retrieval retrieval ...``."""
    parser = argparse.ArgumentParser(prog="localeval")
    sub = parser.add_subparsers(dest="command", required=True)
    add_parser(sub)
    args = parser.parse_args(argv)
    return int(args.func(args))


if __name__ == "__main__":
    raise SystemExit(main())


def _say(err: TextIO, text: str) -> None:
    """One line on `err`, with query and document ids made terminal-safe."""
    print(terminal_safe(text), file=err)
