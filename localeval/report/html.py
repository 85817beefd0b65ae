"""report.html: the report view laid out as one self-contained page (inline CSS and SVG, no
script, no external font or image; a Content-Security-Policy forbids any fetch), and its inline
SVG charts: a score's distribution, and estimates with their 95% CIs (compare.html draws them
too)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from localeval.report.kit import details_html, esc, fmt, fmt_ci, html_table, html_text, page
from localeval.report.view import (
    BINS,
    CORRECTED_HEADER,
    CORRECTED_NOTE,
    HEADERS,
    ROWS_KEPT,
    RUBRICS_NOTE,
    SCORES_NOTE,
    ReportView,
    histogram,
)


def histogram_svg(
    key: str, values: Sequence[float], mean: float | None, ci: list[float] | None
) -> str:
    """Score distribution over [0, 1]: bars, the 95% CI as a band, the mean as a line."""
    w, h, left, right, top, bottom = 320, 150, 34, 10, 10, 28
    pw, ph = w - left - right, h - top - bottom
    counts = histogram(values)
    ymax = max(counts) or 1

    def x(v: float) -> float:
        return left + min(max(v, 0.0), 1.0) * pw

    parts = [
        f'<svg class="chart hist" data-key="{esc(key)}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img" '
        f'aria-label="distribution of {esc(key)}">'
    ]
    for frac in (0.5, 1.0):
        y = top + ph - frac * ph
        parts.append(f'<line class="grid" x1="{left}" x2="{left + pw}" y1="{y:.1f}" y2="{y:.1f}"/>')
    if ci:
        parts.append(
            f'<rect class="ci" x="{x(ci[0]):.1f}" y="{top}" '
            f'width="{max(1.0, x(ci[1]) - x(ci[0])):.1f}" height="{ph}">'
            f"<title>95% CI {fmt_ci(ci)}</title></rect>"
        )
    bw = pw / BINS
    for i, c in enumerate(counts):
        bh = c / ymax * ph
        parts.append(
            f'<rect class="bar" x="{left + i * bw + 1:.1f}" y="{top + ph - bh:.1f}" '
            f'width="{bw - 2:.1f}" height="{bh:.1f}">'
            f"<title>{i / BINS:.1f}–{(i + 1) / BINS:.1f}: {c}</title></rect>"
        )
    if mean is not None:
        parts.append(
            f'<line class="mean" x1="{x(mean):.1f}" x2="{x(mean):.1f}" y1="{top}" '
            f'y2="{top + ph}"><title>mean {mean:.3f}</title></line>'
        )
    parts.append(
        f'<line class="axis" x1="{left}" x2="{left + pw}" y1="{top + ph}" y2="{top + ph}"/>'
    )
    parts.append(f'<line class="axis" x1="{left}" x2="{left}" y1="{top}" y2="{top + ph}"/>')
    for t in (0, 0.25, 0.5, 0.75, 1.0):
        parts.append(
            f'<text x="{x(t):.1f}" y="{h - 10}" font-size="10" text-anchor="middle">{t:g}</text>'
        )
    parts.append(
        f'<text x="{left - 4}" y="{top + 8}" font-size="10" text-anchor="end">{ymax}</text>'
    )
    parts.append(f'<text x="{left - 4}" y="{top + ph}" font-size="10" text-anchor="end">0</text>')
    parts.append("</svg>")
    return "".join(parts)


def forest_svg(
    rows: list[tuple[str, float | None, list[float] | None]],
    *,
    lo: float = 0.0,
    hi: float = 1.0,
    zero: float | None = None,
    css_class: str = "forest",
) -> str:
    """One line per key: the estimate as a dot and its 95% CI as a whisker, on [lo, hi]."""
    label_w, plot_w, row_h, top, bottom = 300, 420, 24, 8, 30
    w, h = label_w + plot_w + 20, top + row_h * len(rows) + bottom

    def x(v: float) -> float:
        return label_w + (min(max(v, lo), hi) - lo) / (hi - lo) * plot_w

    parts = [
        f'<svg class="chart {css_class}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {w} {h}" width="{w}" height="{h}" role="img">'
    ]
    ticks = [lo + (hi - lo) * i / 4 for i in range(5)]
    for t in ticks:
        parts.append(
            f'<line class="grid" x1="{x(t):.1f}" x2="{x(t):.1f}" y1="{top}" y2="{h - bottom}"/>'
        )
        parts.append(
            f'<text x="{x(t):.1f}" y="{h - 12}" font-size="11" text-anchor="middle">{t:+.2g}</text>'
            if zero is not None
            else f'<text x="{x(t):.1f}" y="{h - 12}" font-size="11" '
            f'text-anchor="middle">{t:g}</text>'
        )
    if zero is not None:
        parts.append(
            f'<line class="zero" x1="{x(zero):.1f}" x2="{x(zero):.1f}" y1="{top}" '
            f'y2="{h - bottom}"/>'
        )
    for i, (key, est, ci) in enumerate(rows):
        y = top + row_h * i + row_h / 2
        label = key if len(key) <= 44 else key[:43] + "…"
        parts.append(
            f'<text x="{label_w - 8}" y="{y + 4:.1f}" font-size="12" '
            f'text-anchor="end">{esc(label)}</text>'
        )
        if ci:
            parts.append(
                f'<line class="whisker" x1="{x(ci[0]):.1f}" x2="{x(ci[1]):.1f}" '
                f'y1="{y:.1f}" y2="{y:.1f}"/>'
            )
        if est is not None:
            parts.append(
                f'<circle class="dot" cx="{x(est):.1f}" cy="{y:.1f}" r="5">'
                f"<title>{esc(key)}: {est:.3f} {fmt_ci(ci)}</title></circle>"
            )
    parts.append(
        f'<line class="axis" x1="{label_w}" x2="{label_w + plot_w}" y1="{h - bottom}" '
        f'y2="{h - bottom}"/>'
    )
    parts.append("</svg>")
    return "".join(parts)


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
    if view.same:
        body.append(f'<p class="muted">{esc(view.same)}</p>')
    if view.shield:
        body.append(f'<p class="warn">{esc(view.shield)}</p>')
    if view.rubrics:
        body.append(f"<h3>Rubrics</h3><p>{RUBRICS_NOTE}</p>"
                    + html_table(HEADERS["rubrics"], view.rubrics, numeric=[1]))
    if view.corrected or view.corrected_lines:
        body.append(f"<h2>Corrected by human labels</h2><p>{esc(CORRECTED_NOTE)}</p>")
        if view.corrected:
            body.append(html_table(CORRECTED_HEADER, view.corrected, numeric=range(1, 8)))
        body.append("<ul>" + "".join(f"<li>{esc(x)}</li>" for x in view.corrected_lines)
                    + "</ul>")
    if view.diagnosis is not None:
        from localeval.report import diagnosis

        body.append(diagnosis.html(view.diagnosis))
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
    body.append(_chats(view))
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
    return page(view.title, "".join(body), CHAT_CSS if view.chats else "")


CHAT_CSS = (".chat{max-width:52rem}.msg{margin:.3rem 0;padding:.4rem .6rem;border-radius:6px}"
            ".msg.user{background:#eef3fb}.msg.assistant{background:#f4f4f4;margin-left:2rem}"
            ".msg .who{font-weight:600;margin-right:.4rem}.msg ul{margin:.2rem 0}")


def _chats(view: ReportView) -> str:
    """The conversations as chats (docs/conversations.md)."""
    if not view.chats:
        return ""
    out = [f"<h2>Conversations</h2><p>The first {len(view.chats)} conversations; each score of "
           "a conversation is the mean over its assistant turns.</p>"]
    for c in view.chats:
        out.append(f'<details class="chat"><summary>{esc(c.id)} · line {c.line}'
                   + (f" · {esc(', '.join(c.scores))}" if c.scores else "") + "</summary>")
        for t in c.turns:
            if t.asked is not None:
                rewrite = (f'<div class="muted">standalone: {html_text(t.standalone)}</div>'
                           if t.standalone else "")
                out.append(f'<div class="msg user"><span class="who">user</span>'
                           f"{html_text(t.asked)}{rewrite}</div>")
            notes = "".join(f"<li>{esc(f)}</li>" for f in t.failed)
            out.append(f'<div class="msg assistant"><span class="who">assistant · turn '
                       f"{t.turn}</span>{html_text(t.answer)}"
                       f'<div class="muted">{esc(", ".join(t.scores))}</div>'
                       + (f"<ul>{notes}</ul>" if notes else "") + "</div>")
        out.append("</details>")
    return "".join(out)
