"""The report's inline SVG charts: a score's distribution, and estimates with their 95% CIs."""

from __future__ import annotations

from collections.abc import Sequence

from localeval.report.kit import esc, fmt_ci
from localeval.report.view import BINS, histogram


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
