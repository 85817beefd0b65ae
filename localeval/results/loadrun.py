"""A run folder read back (report, compare): results.jsonl's records in input order, with
summary.json, or what can be rebuilt without it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from localeval.errors import UsageError
from localeval.results.ordered import OrderedResults, index_results
from localeval.results.records import RESULTS_FILE, SampleRecord, read_results
from localeval.results.runfiles import RUN_FILE, SUMMARY_FILE, read_json
from localeval.results.tally import recompute_metrics


@dataclass
class RunFolder:
    """results.jsonl read back (its records in input order: in memory, or read one at a time
    when loaded with stream=True), with summary.json (or what can be rebuilt without it)."""

    path: Path
    records: list[SampleRecord] | OrderedResults
    summary: dict[str, Any]
    notes: list[str] = field(default_factory=list)


def load_run(path: Path, *, stream: bool = False) -> RunFolder:
    """Read a run folder. The per-metric summary is always recomputed from results.jsonl.
    `stream`: the records stay in the file (an index of them is read; see `ordered`)."""
    path = Path(path)
    results = path / RESULTS_FILE
    if not results.is_file():
        raise UsageError(
            f"{path} is not a run folder: {RESULTS_FILE} not found "
            "(give the --out folder of `localeval run`)"
        )
    read = index_results(results) if stream else read_results(results)
    loaded = read_json(path / SUMMARY_FILE)
    summary: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
    if "settings" not in summary:  # no summary.json (killed hard): run.json still has them
        try:
            inputs = read_json(path / RUN_FILE)["inputs"]
            summary["settings"] = inputs if isinstance(inputs, dict) else {}
            summary.setdefault("localeval_version", summary["settings"].get("localeval_version"))
        except (KeyError, TypeError):
            pass
    records: list[SampleRecord] | OrderedResults
    if stream:
        spans = sorted((e.line, e.id, e.offset, e.length) for e in read.records)
        records = OrderedResults(results, [(offset, n, line) for line, _, offset, n in spans])
    else:
        records = sorted(read.records, key=lambda r: (r.line, r.id))
    summary["metrics"] = recompute_metrics(records, summary.get("metrics") or {})
    return RunFolder(path=path, records=records, summary=summary, notes=read.notes())
