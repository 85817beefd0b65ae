"""report.html: the report view laid out as one self-contained page (inline CSS and SVG, no
script, no external font or image; a Content-Security-Policy forbids any fetch)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from localeval.report.charts import forest_svg, histogram_svg
from localeval.report.view import (
    HEADERS,
    ROWS_KEPT,
    SCORES_NOTE,
    ReportView,
    clip_text,
    fmt,
    fmt_ci,
    is_verdict,
)
from localeval.safe import esc

MAX_ROWS = ROWS_KEPT  # error rows shown: as many as the view keeps

CSS = """
:root{--fg:#1d2430;--muted:#5b6577;--line:#d7dce4;--bg:#fff;--card:#f6f8fb;--bar:#4a7bd0;
--ci:#f3b13b;--mean:#c2372b;--ok:#1f7a3d;--bad:#b42318}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC",
"PingFang SC","Microsoft YaHei",sans-serif;color:var(--fg);background:var(--bg);margin:0;
line-height:1.45;font-size:15px}
main{max-width:1100px;margin:0 auto;padding:24px}
h1{font-size:1.6em;margin:0 0 4px}h2{margin-top:2em;border-bottom:1px solid var(--line);
padding-bottom:4px}h3{margin:1.2em 0 .4em}
.muted{color:var(--muted)}.warn{background:#fff4e5;border:1px solid #f3b13b;padding:8px 12px;
border-radius:6px}
table{border-collapse:collapse;margin:8px 0}th,td{border:1px solid var(--line);padding:4px 8px;
text-align:left;vertical-align:top}th{background:var(--card)}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.charts{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:14px}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:10px}
.card h3{margin:0 0 4px;font-size:1em;word-break:break-all}
svg text{font-family:inherit;fill:var(--fg)}
svg .axis{stroke:#8a94a6;stroke-width:1}svg .grid{stroke:#e3e7ee;stroke-width:1}
svg .bar{fill:var(--bar)}svg .ci{fill:var(--ci);opacity:.35}
svg .mean{stroke:var(--mean);stroke-width:2}svg .dot{fill:var(--mean)}
svg .whisker{stroke:var(--fg);stroke-width:2}svg .zero{stroke:#8a94a6;stroke-dasharray:4 3}
details{border:1px solid var(--line);border-radius:6px;padding:6px 10px;margin:6px 0}
summary{cursor:pointer;font-weight:600}
.ok{color:var(--ok);font-weight:600}.bad{color:var(--bad);font-weight:600}
.text{white-space:pre-wrap;word-break:break-word}
code{font-size:.9em;word-break:break-all}
"""


def html_table(header: list[str], rows: list[list[Any]], numeric: Iterable[int] = ()) -> str:
    nums = set(numeric)
    head = "".join(f"<th>{esc(h)}</th>" for h in header)
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="num">{esc(c)}</td>' if i in nums else f"<td>{esc(c)}</td>"
            for i, c in enumerate(row)
        )
        + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def page(title: str, body: str) -> str:
    """A complete, self-contained HTML document."""
    csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{esc(title)}</title><style>{CSS}</style></head>"
        f"<body><main>{body}</main></body></html>\n"
    )


def details_html(value: Any, depth: int = 0) -> str:
    """A metric's details (statements and verdicts, questions, TP/FP/FN, ...), generically."""
    if depth > 6:
        text = json.dumps(value, ensure_ascii=False, default=str)
        return f"<code>{esc(clip_text(text, 300))}</code>"
    if isinstance(value, Mapping):
        if not value:
            return '<span class="muted">(none)</span>'
        rows = "".join(
            f"<tr><th>{esc(k)}</th><td>{_cell(str(k), v, depth)}</td></tr>"
            for k, v in value.items()
        )
        return f'<table class="kv">{rows}</table>'
    if isinstance(value, list):
        if not value:
            return '<span class="muted">(none)</span>'
        if all(isinstance(item, Mapping) for item in value):
            cols: list[str] = []
            for item in value:
                cols += [str(k) for k in item if str(k) not in cols]
            head = "<th>#</th>" + "".join(f"<th>{esc(c)}</th>" for c in cols)
            body = "".join(
                f'<tr><td class="num">{i}</td>'
                + "".join(f"<td>{_cell(c, item.get(c), depth)}</td>" for c in cols)
                + "</tr>"
                for i, item in enumerate(value, 1)
            )
            return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"
        items = "".join(f"<li>{details_html(v, depth + 1)}</li>" for v in value)
        return f"<ol>{items}</ol>"
    if isinstance(value, float):
        return esc(f"{value:.4g}")
    if value is None:
        return '<span class="muted">-</span>'
    return f'<span class="text">{esc(clip_text(str(value)))}</span>'


def _cell(key: str, value: Any, depth: int) -> str:
    if is_verdict(key, value):
        return '<span class="ok">✓ 1</span>' if value == 1 else '<span class="bad">✗ 0</span>'
    return details_html(value, depth + 1)


def _text(value: str) -> str:
    return f'<span class="text">{esc(clip_text(value))}</span>'


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
    body.append(f"<h2>Scores</h2><p>{SCORES_NOTE}</p>")
    if view.forest:
        body.append(forest_svg(view.forest))
    body.append(html_table(HEADERS["overview"], view.overview, numeric=range(1, 7)))
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
            rows = [("question", _text(r.question)) if r.question else None,
                    ("answer", _text(r.answer)) if r.answer else None,
                    ("also", ", ".join(esc(a) for a in r.also)) if r.also else None,
                    ("explanation", details_html(r.details)) if r.details is not None else None]
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
