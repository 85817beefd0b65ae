"""A run's results: its records (`records`: results.jsonl), the --out folder (`folder`: what it
is, opening it, results.jsonl in input order, reading it back), its other files (`runfiles`:
run.json, summary.json, durable writes), summary.json (`summary`), the statistics over records
(`tally`) and the CI gates (`gates`)."""

from localeval.errors import RunInterrupted
from localeval.results.folder import (
    OrderedResults,
    OutputFolder,
    RunFolder,
    load_run,
    rewrite_in_order,
)
from localeval.results.records import (
    RESULTS_FILE,
    ReadResults,
    ResultsWriter,
    SampleRecord,
    read_results,
)
from localeval.results.runfiles import (
    RUN_FILE,
    SUMMARY_FILE,
    check_resumable,
    fingerprint_inputs,
    write_json,
)
from localeval.results.tally import ScoreTally, bootstrap_ci, metric_summary, recompute_metrics

__all__ = [
    "RESULTS_FILE",
    "RUN_FILE",
    "SUMMARY_FILE",
    "OrderedResults",
    "OutputFolder",
    "ReadResults",
    "ResultsWriter",
    "RunFolder",
    "RunInterrupted",
    "SampleRecord",
    "ScoreTally",
    "bootstrap_ci",
    "check_resumable",
    "fingerprint_inputs",
    "load_run",
    "metric_summary",
    "read_results",
    "recompute_metrics",
    "rewrite_in_order",
    "write_json",
]
