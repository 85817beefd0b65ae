"""`report` and `compare`: re-render a run folder, compare two runs; each with its gates."""

from __future__ import annotations

import argparse

from localeval.cli.common import gate_report, say, summary_table, to_json
from localeval.errors import UsageError
from localeval.safe import terminal_safe


def cmd_report(args: argparse.Namespace) -> int:
    from localeval.labels.attach import attach_labels
    from localeval.report import rerender
    from localeval.results import gates
    from localeval.results.folder import check_run_folder

    fail_under = gates.parse_gates(args.fail_under, "--fail-under", say)
    if (args.run_dir / "results.jsonl").is_file():
        check_run_folder(args.run_dir)  # summary.json is written only in a localeval run folder
        attach_labels(args.run_dir, say)  # labels.jsonl → summary.json's corrected figures
    run_folder, paths = rerender(args.run_dir)
    for note in run_folder.notes:
        say(f"note: {note}")
    print(summary_table(run_folder.summary))
    print(terminal_safe("report: " + "  ".join(str(p) for p in paths)))
    return gate_report(
        gates.check_fail_under(
            fail_under, run_folder.summary, max_unscored=args.max_unscored,
            advisory_until_checked=args.advisory_until_checked, warn=say),
        len(fail_under),
    )


def cmd_compare(args: argparse.Namespace) -> int:
    from localeval.errors import LabelsError
    from localeval.labels.compare import corrected_differences
    from localeval.report import compare
    from localeval.results import gates

    max_drop = gates.parse_gates(args.max_drop, "--max-drop", say)
    if args.top < 0:
        raise UsageError("--top must be 0 or more")
    comparison = compare.compare_runs(args.run_a, args.run_b, top=args.top,
                                      allow_different=args.allow_different_datasets)
    try:  # both runs labelled: the corrected difference beside the judge's
        comparison.corrected, notes = corrected_differences(args.run_a, args.run_b)
    except LabelsError as exc:
        notes = [f"no corrected difference: {exc}"]
    for note in notes:
        say(f"note: {note}")
    if comparison.other_questions:
        say(f"warning: {len(comparison.other_questions)} id(s) hold another question in B "
            "(runs of different datasets); they are left out of the comparison")
    if comparison.default_ids:
        say(f"warning: {len(comparison.default_ids)} sample(s) have neither an id nor a "
            "question (default ids row-<line>): nothing pairs them across the runs, so they "
            "are left out; give the rows ids to compare them")
    for note in comparison.a.notes + comparison.b.notes:
        say(f"note: {note}")
    if args.json:
        print(to_json(comparison.to_json()))
    else:
        print(compare.to_markdown(comparison), end="")
    if args.out is not None:
        paths = compare.write(comparison, args.out)
        say("comparison: " + "  ".join(str(p) for p in paths))
    return gate_report(
        gates.check_max_drop(max_drop, comparison, max_unpaired=args.max_unpaired), len(max_drop)
    )
