"""report.md and a self-contained report.html for a run folder.

Per score: the distribution (10 bins over [0, 1]) with the mean and its bootstrap 95% interval;
the lowest-scoring samples with the judge's explanations (whatever the metric recorded in
`details`); errors; and the run's metadata. `view` computes what is shown, once; `markdown` and
`html` (with `charts`) only lay it out.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from localeval.report.html import details_html, esc, html_table, page
from localeval.report.html import render_html as _html
from localeval.report.markdown import details_md, md_cell, md_table
from localeval.report.markdown import render_markdown as _markdown
from localeval.report.view import (
    ReportView,
    build_view,
    fmt,
    fmt_ci,
    histogram,
    lowest_keys,
    view_of,
)
from localeval.results.records import SampleRecord
from localeval.results.runfiles import check_run_folder, write_text
from localeval.results.runfolder import RunFolder, load_run

__all__ = [
    "ReportView", "build_view", "details_html", "details_md", "esc", "fmt", "fmt_ci",
    "histogram", "html_table", "lowest_keys", "md_cell", "md_table", "page", "render_html",
    "render_markdown", "rerender", "write_report",
]


def render_markdown(run: RunFolder | ReportView) -> str:
    return _markdown(run if isinstance(run, ReportView) else build_view(run))


def render_html(run: RunFolder | ReportView) -> str:
    return _html(run if isinstance(run, ReportView) else build_view(run))


def write_report(
    out_dir: Path, records: Iterable[SampleRecord], summary: Mapping[str, Any]
) -> list[Path]:
    """Write report.md and report.html into out_dir; returns their paths. A list of records is
    put in input order; any other iterable must give them in input order (read in one pass)."""
    if isinstance(records, list):
        records = sorted(records, key=lambda r: (r.line, r.id))
    view = view_of(Path(out_dir), dict(summary), records)
    md, html_path = Path(out_dir) / "report.md", Path(out_dir) / "report.html"
    write_text(md, _markdown(view))  # atomic, durable, never through a link
    write_text(html_path, _html(view))
    return [md, html_path]


def rerender(out_dir: Path) -> tuple[RunFolder, list[Path]]:
    """`localeval report DIR`: rebuild both files from results.jsonl (+ summary.json metadata)."""
    run = load_run(Path(out_dir), stream=True)  # records read one at a time, twice
    check_run_folder(run.path)
    return run, write_report(run.path, run.records, run.summary)
