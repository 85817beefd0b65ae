"""The results of a run, one import away: records (results.jsonl), statistics and the run
folder live in `records`, `stats`, `runfiles` and `runfolder`; this module re-exports what
callers use."""

from localeval.errors import RunInterrupted
from localeval.ordered import OrderedResults, rewrite_in_order
from localeval.records import (
    RESULTS_FILE,
    ReadResults,
    ResultsWriter,
    SampleRecord,
    input_hash,
    read_results,
)
from localeval.runfiles import (
    RUN_FILE,
    SUMMARY_FILE,
    check_resumable,
    fingerprint_inputs,
    write_json,
)
from localeval.runfolder import OutputFolder, RunFolder, load_run
from localeval.stats import bootstrap_ci, metric_summary, recompute_metrics

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
    "bootstrap_ci",
    "check_resumable",
    "fingerprint_inputs",
    "input_hash",
    "load_run",
    "metric_summary",
    "read_results",
    "recompute_metrics",
    "rewrite_in_order",
    "write_json",
]
