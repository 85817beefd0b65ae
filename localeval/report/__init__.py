"""Every page localeval writes, on one page kit (`kit`).

- the run report: report.md and a self-contained report.html for a run folder. Per score: the
  distribution (10 bins over [0, 1]) with the mean and its bootstrap 95% interval; the
  lowest-scoring samples with the judge's explanations (whatever the metric recorded in
  `details`); errors; and the run's metadata. `view` computes what is shown, once; `markdown`
  and `html` (with its SVG charts) only lay it out.
- the comparison of two runs (`compare`: compare.md, compare.html, compare.json);
- the meta-eval page (`meta_eval_page`: the terminal table, meta_eval.md, meta_eval.html);
  these two are imported on first use (a run writes neither);
- the kit itself (`kit`): CSS, `page`, `esc`, number formatters, text/Markdown/HTML tables and
  a metric's details as Markdown or HTML.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from localeval.report.html import render_html as _html
from localeval.report.kit import (
    CSS,
    clip_text,
    details_html,
    details_md,
    esc,
    fmt,
    fmt_ci,
    html_table,
    html_text,
    is_verdict,
    md_cell,
    md_scalar,
    md_table,
    page,
    text_table,
)
from localeval.report.markdown import render_markdown as _markdown
from localeval.report.view import ReportView, build_view, histogram, lowest_keys, view_of
from localeval.results.folder import RunFolder, check_run_folder, load_run
from localeval.results.records import SampleRecord
from localeval.results.runfiles import write_text

__all__ = [
    "CSS", "Comparison", "ReportView", "ScoreDiff", "build_view", "clip_text", "compare",
    "compare_runs", "details_html", "details_md", "esc", "fmt", "fmt_ci", "histogram",
    "html_table", "html_text", "is_verdict", "lowest_keys", "md_cell", "md_scalar", "md_table",
    "meta_eval_page", "page", "render_html", "render_markdown", "rerender", "text_table",
    "write_report",
]


_LAZY = {"compare": "compare", "meta_eval_page": "meta_eval_page", "Comparison": "compare",
         "ScoreDiff": "compare", "compare_runs": "compare"}
"""Names of the pages a run does not write (compare, meta-eval), imported on first use: a run
never loads them."""


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    module = importlib.import_module(f"{__name__}.{_LAZY[name]}")
    return module if name == _LAZY[name] else getattr(module, name)


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
