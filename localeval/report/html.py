"""report.html: the report view laid out as one self-contained page (inline CSS and SVG, no
script, no external font or image; a Content-Security-Policy forbids any fetch)."""

from __future__ import annotations

from typing import Any

from localeval.report.charts import forest_svg, histogram_svg
from localeval.report.kit import details_html, esc, fmt, fmt_ci, html_table, html_text, page
from localeval.report.labelled import HEADER as CORRECTED_HEADER
from localeval.report.labelled import NOTE as CORRECTED_NOTE
from localeval.report.view import HEADERS, ROWS_KEPT, RUBRICS_NOTE, SCORES_NOTE, ReportView

MAX_ROWS = ROWS_KEPT  # error rows shown: as many as the view keeps


def _section(
    title: str, header: list[str], rows: list[list[Any]], limit: int | None,
    total: int | None = None,
) -> str:
    """A table of the first `limit` rows; `total`: how many rows there are (default: all given)."""
    if not rows:
        return ""
    total = len(rows) if total is None else total
    more = (f"<p>... and {total - limit} more (see results.jsonl)</p>"
            if limit is not None and total > limit else "")
    return f"{title}{html_table(header, rows[:limit])}{more}"


def render_html(view: ReportView) -> str:
    when = f" · {esc(view.finished_at)}" if view.finished_at else ""
    body = [f"<h1>{esc(view.title)}</h1>",
            f'<p class="muted">{esc(view.source)} · {view.n_records} samples{when}</p>']
    if view.status:
        body.append(f'<p class="warn">{esc(view.status)}</p>')
    if view.calibration:
        body.append(f'<p class="warn">{esc(view.calibration)}</p>')
    body.append(f"<h2>Scores</h2><p>{SCORES_NOTE}</p>")
    if view.forest:
        body.append(forest_svg(view.forest))
    body.append(html_table(HEADERS["overview"], view.overview, numeric=range(1, 7)))
    if view.rubrics:
        body.append(f"<h3>Rubrics</h3><p>{RUBRICS_NOTE}</p>"
                    + html_table(HEADERS["rubrics"], view.rubrics, numeric=[1]))
    if view.corrected or view.corrected_lines:
        body.append(f"<h2>Corrected by human labels</h2><p>{esc(CORRECTED_NOTE)}</p>")
        if view.corrected:
            body.append(html_table(CORRECTED_HEADER, view.corrected, numeric=range(1, 8)))
        body.append("<ul>" + "".join(f"<li>{esc(x)}</li>" for x in view.corrected_lines)
                    + "</ul>")
    body.append(
        '<h2>Distributions</h2><p class="muted">Bars: samples per score bin; red line: '
        'mean; orange band: 95% CI of the mean.</p><div class="charts">'
    )
    for d in view.distributions:
        body.append(
            f'<div class="card"><h3>{esc(d.key)}</h3>'
            f"{histogram_svg(d.key, d.values, d.mean, d.ci95)}"
            f'<div class="muted">mean {fmt(d.mean)} · 95% CI {fmt_ci(d.ci95)}'
            f" · n {d.count} · errors {d.errors}</div></div>"
        )
    body.append("</div><h2>Lowest-scoring samples</h2>")
    for low in view.lowest:
        body.append(f"<h3>{esc(low.key)}</h3>")
        for i, r in enumerate(low.samples):
            rows = [("question", html_text(r.question)) if r.question else None,
                    ("answer", html_text(r.answer)) if r.answer else None,
                    ("also", ", ".join(esc(a) for a in r.also)) if r.also else None,
                    ("explanation", details_html(r.details, keys=low.verdict_keys))
                    if r.details is not None else None]
            body.append(
                f"<details{' open' if i == 0 else ''}><summary>{esc(r.id)} · {esc(low.key)} = "
                f"{fmt(r.score)} · line {r.line}</summary><table class=\"kv\">"
                + "".join(f"<tr><th>{a}</th><td>{b}</td></tr>" for a, b in filter(None, rows))
                + "</table></details>"
            )
    body.append(_section("<h2>Errors</h2>", HEADERS["errors"], view.errors, MAX_ROWS,
                         view.n_errors))
    body.append(
        _section("<h2>Input rows skipped</h2>", HEADERS["problems"], view.problems, MAX_ROWS)
    )
    meta = view.meta
    body.append("<h2>Run</h2>" + html_table(HEADERS["run"], meta["run"]))
    body.append(_section("<h3>Models</h3>", HEADERS["models"], meta["models"], None))
    body.append(
        _section("<h3>Prompt templates</h3>", HEADERS["prompts"], meta["prompts"], None)
    )
    body.append(_section("<h3>Settings</h3>", HEADERS["settings"], meta["settings"], None))
    return page(view.title, "".join(body))
