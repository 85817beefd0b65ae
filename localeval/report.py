"""report.md and a self-contained report.html for a run folder.

The HTML page needs nothing but itself: inline CSS, inline SVG charts, no script, no external
font or image, and a Content-Security-Policy that forbids any fetch. Per score: the distribution
(10 bins over [0, 1]) with the mean and its bootstrap 95% interval; the lowest-scoring samples
with the judge's explanations (statements and verdict reasons, generated questions, TP/FP/FN —
whatever the metric recorded in `details`); errors; and the run's metadata (models and sha256,
prompt hashes, settings, elapsed time, tokens, cache hits).
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from localeval.results import RunFolder, SampleRecord, load_run

LOWEST = 5  # samples listed per metric
BINS = 10
VERDICT_KEYS = {"verdict", "clear", "flag", "useful", "attributable", "supported", "relevant"}
TEXT_LIMIT = 1200

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


# ---- entry points ------------------------------------------------------------------------------


def write_report(
    out_dir: Path, records: list[SampleRecord], summary: Mapping[str, Any]
) -> list[Path]:
    """Write report.md and report.html into out_dir; returns their paths."""
    run = RunFolder(
        path=Path(out_dir),
        records=sorted(records, key=lambda r: (r.line, r.id)),
        summary=dict(summary),
    )
    md, page = Path(out_dir) / "report.md", Path(out_dir) / "report.html"
    md.write_text(render_markdown(run), encoding="utf-8")
    page.write_text(render_html(run), encoding="utf-8")
    return [md, page]


def rerender(out_dir: Path) -> tuple[RunFolder, list[Path]]:
    """`localeval report DIR`: rebuild both files from results.jsonl (+ summary.json metadata)."""
    run = load_run(Path(out_dir))
    return run, write_report(run.path, run.records, run.summary)


# ---- shared helpers (also used by compare) -----------------------------------------------------


def esc(value: Any) -> str:
    return html.escape(str(value), quote=True)


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def fmt_ci(ci: Iterable[float] | None, digits: int = 3) -> str:
    if not ci:
        return "-"
    lo, hi = list(ci)
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def clip_text(text: str, limit: int = TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


def md_cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ").replace("\r", " ")


def md_table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


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


def histogram(values: list[float]) -> list[int]:
    counts = [0] * BINS
    for v in values:
        counts[min(BINS - 1, max(0, int(min(max(v, 0.0), 1.0) * BINS)))] += 1
    return counts


def histogram_svg(key: str, values: list[float], mean: float | None, ci: list[float] | None) -> str:
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


# ---- what the report shows -----------------------------------------------------------------------


def _values(records: list[SampleRecord], key: str) -> list[float]:
    return [float(v) for r in records if (v := r.scores.get(key)) is not None]


def lowest_keys(metrics: Mapping[str, Mapping[str, Any]]) -> list[tuple[str, str]]:
    """(score key, owner) to list the lowest samples of: one key per metric (its main score when
    it has one), and the first retrieval figure."""
    from localeval.retrieval import RETRIEVAL_METRICS

    chosen: dict[str, tuple[str, str]] = {}  # group → (key, owner)
    for key, m in metrics.items():
        owner = m.get("metric", key)
        if m.get("count", 0) == 0:
            continue
        group = "retrieval" if owner in RETRIEVAL_METRICS else owner  # one list for all figures
        if group not in chosen or (key == owner and group != "retrieval"):
            chosen[group] = (key, owner)
    return list(chosen.values())


def lowest(records: list[SampleRecord], key: str, n: int = LOWEST) -> list[SampleRecord]:
    scored = [r for r in records if r.scores.get(key) is not None]
    return sorted(scored, key=lambda r: (r.scores[key], r.line))[:n]


def _is_verdict(key: str, value: Any) -> bool:
    return key in VERDICT_KEYS and not isinstance(value, bool) and value in (0, 1)


def _verdict_html(value: int) -> str:
    return '<span class="ok">✓ 1</span>' if value == 1 else '<span class="bad">✗ 0</span>'


def details_html(value: Any, depth: int = 0) -> str:
    """Render a metric's details (statements and verdicts, questions, TP/FP/FN, ...) generically."""
    if depth > 6:
        text = json.dumps(value, ensure_ascii=False, default=str)
        return f"<code>{esc(clip_text(text, 300))}</code>"
    if isinstance(value, Mapping):
        if not value:
            return '<span class="muted">(none)</span>'
        rows = "".join(
            f"<tr><th>{esc(k)}</th><td>{_cell_html(str(k), v, depth)}</td></tr>"
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
                + "".join(f"<td>{_cell_html(c, item.get(c), depth)}</td>" for c in cols)
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


def _cell_html(key: str, value: Any, depth: int) -> str:
    if _is_verdict(key, value):
        return _verdict_html(int(value))
    return details_html(value, depth + 1)


def details_md(value: Any, indent: str = "") -> list[str]:
    """The same details as Markdown bullet lines."""
    if isinstance(value, Mapping):
        out = []
        for k, v in value.items():
            if isinstance(v, (Mapping, list)) and v:
                out.append(f"{indent}- {k}:")
                out += details_md(v, indent + "  ")
            else:
                out.append(f"{indent}- {k}: {_md_scalar(str(k), v)}")
        return out
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, Mapping):  # verdict marks first: "- ✗ statement: ...; reason: ..."
                marks = [
                    f"{_md_scalar(str(k), v)}" + ("" if k == "verdict" else f" {k}")
                    for k, v in item.items()
                    if _is_verdict(str(k), v)
                ]
                rest = [
                    f"{k}: {_md_scalar(str(k), v)}"
                    for k, v in item.items()
                    if not _is_verdict(str(k), v)
                ]
                out.append(f"{indent}- " + " ".join([*marks, "; ".join(rest)]).strip())
            else:
                out.append(f"{indent}- {_md_scalar('', item)}")
        return out
    return [f"{indent}- {_md_scalar('', value)}"]


def _md_scalar(key: str, value: Any) -> str:
    if _is_verdict(key, value):
        return "✓" if value == 1 else "✗"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (Mapping, list)):
        return clip_text(json.dumps(value, ensure_ascii=False, default=str), 300)
    return clip_text(str(value), 600).replace("\n", " ")


def _owner_keys(metrics: Mapping[str, Mapping[str, Any]], owner: str) -> list[str]:
    return [k for k, m in metrics.items() if m.get("metric") == owner]


def _status(summary: Mapping[str, Any], records: list[SampleRecord]) -> str | None:
    total = (summary.get("dataset") or {}).get("samples")
    if summary.get("complete") is False or (isinstance(total, int) and len(records) < total):
        return (
            f"partial run: {len(records)} of {total if total is not None else '?'} samples "
            "done (resume with `python -m localeval run ... --resume`)"
        )
    return None


def _metadata_rows(summary: Mapping[str, Any]) -> dict[str, list[list[Any]]]:
    models = [
        [
            role,
            info.get("name", ""),
            info.get("sha256", ""),
            info.get("path", ""),
            info.get("fallback", ""),
        ]
        for role, info in (summary.get("models") or {}).items()
        if isinstance(info, Mapping)
    ]
    cache = (summary.get("models") or {}).get("cache")
    prompts = [[name, sha] for name, sha in (summary.get("prompts") or {}).items()]
    run: list[list[Any]] = [["localeval", summary.get("localeval_version", "?")]]
    dataset = summary.get("dataset") or {}
    run.append(["dataset", f"{dataset.get('source', '?')} ({dataset.get('samples', '?')} samples)"])
    if summary.get("finished_at"):
        run.append(["finished at", summary["finished_at"]])
    if summary.get("elapsed_s") is not None:
        run.append(["elapsed", f"{summary['elapsed_s']:.1f} s"])
    if summary.get("resumed"):
        run.append(
            [
                "resumed",
                f"{summary['resumed'].get('samples_from_earlier_sessions', 0)} "
                "samples came from earlier sessions (elapsed and tokens are this "
                "session's)",
            ]
        )
    judge = summary.get("judge") or {}
    if judge:
        asked = judge.get("calls", 0) + judge.get("cached", 0)
        hit = f" ({judge.get('cached', 0) / asked:.0%} of {asked} requests)" if asked else ""
        run.append(["judge calls", judge.get("calls", 0)])
        run.append(["cache hits", f"{judge.get('cached', 0)}{hit}"])
        run.append(
            [
                "tokens",
                f"{judge.get('prompt_tokens', 0)} prompt "
                f"({judge.get('prompt_tokens_processed', 0)} processed) / "
                f"{judge.get('completion_tokens', 0)} generated",
            ]
        )
        elapsed = summary.get("elapsed_s") or 0
        if elapsed and judge.get("completion_tokens"):
            run.append(["generated tokens/s", f"{judge['completion_tokens'] / elapsed:.1f}"])
        if judge.get("failures"):
            run.append(["judge failures", judge["failures"]])
        if judge.get("calls_by_step"):
            run.append(
                ["calls by step", ", ".join(f"{k} {v}" for k, v in judge["calls_by_step"].items())]
            )
    if cache:
        run.append(["answer cache", cache])
    emb = summary.get("embedder") or {}
    if emb:
        run.append(["texts embedded", emb.get("texts_encoded", 0)])
    settings = [
        [k, json.dumps(v, ensure_ascii=False, default=str)]
        for k, v in (summary.get("settings") or {}).items()
    ]
    return {"models": models, "prompts": prompts, "run": run, "settings": settings}


def _errors(records: list[SampleRecord]) -> list[list[Any]]:
    return [[r.id, r.line, metric, msg] for r in records for metric, msg in r.errors.items()]


def _overview_rows(metrics: Mapping[str, Mapping[str, Any]]) -> list[list[Any]]:
    return [
        [
            key,
            fmt(m.get("mean")),
            fmt_ci(m.get("ci95")),
            m.get("count", 0),
            m.get("unscored", 0),
            m.get("errors", 0),
            m.get("skipped", 0),
        ]
        for key, m in metrics.items()
    ]


OVERVIEW_HEADER = ["score", "mean", "95% CI", "n scored", "unscored", "errors", "skipped"]


# ---- Markdown ---------------------------------------------------------------------------------


def render_markdown(run: RunFolder) -> str:
    s, records = run.summary, run.records
    metrics = s.get("metrics") or {}
    out = [f"# localeval report: {run.path.name}", ""]
    status = _status(s, records)
    if status:
        out += [f"> **{status}**", ""]
    out += [
        "## Scores",
        "",
        "Mean per score with a percentile bootstrap 95% confidence interval "
        "(2,000 resamples of the scored samples).",
        "",
        md_table(OVERVIEW_HEADER, _overview_rows(metrics)),
        "",
    ]
    out += ["## Distributions", ""]
    for key in metrics:
        values = _values(records, key)
        if not values:
            continue
        counts = histogram(values)
        peak = max(counts) or 1
        out += [f"### {key}", "", "| bin | n | |", "|---|---:|---|"]
        for i, c in enumerate(counts):
            bar = "█" * round(c / peak * 20)
            out.append(f"| {i / BINS:.1f}–{(i + 1) / BINS:.1f} | {c} | {bar} |")
        out.append("")
    out += ["## Lowest-scoring samples", ""]
    for key, owner in lowest_keys(metrics):
        out += [f"### {key}", ""]
        for r in lowest(records, key):
            out.append(f"#### {r.id} (line {r.line}): {key} = {fmt(r.scores[key])}")
            out.append("")
            if r.question:
                out.append(f"- question: {md_cell(clip_text(r.question, 600))}")
            if r.answer:
                out.append(f"- answer: {md_cell(clip_text(r.answer, 600))}")
            others = [
                f"{k} = {fmt(r.scores.get(k))}"
                for k in _owner_keys(metrics, owner)
                if k != key and k in r.scores
            ]
            if others:
                out.append("- also: " + ", ".join(others))
            if owner in r.details:
                out.append("- explanation:")
                out += details_md(r.details[owner], "  ")
            out.append("")
    errors = _errors(records)
    if errors:
        out += ["## Errors", "", md_table(["id", "line", "metric", "error"], errors[:50]), ""]
        if len(errors) > 50:
            out += [f"... and {len(errors) - 50} more (see results.jsonl)", ""]
    problems = (s.get("dataset") or {}).get("input_errors") or []
    if problems:
        out += [
            "## Input rows skipped",
            "",
            md_table(
                ["line", "id", "problem"],
                [[p.get("line"), p.get("id") or "", p.get("message")] for p in problems[:50]],
            ),
            "",
        ]
    meta = _metadata_rows(s)
    out += ["## Run", "", md_table(["item", "value"], meta["run"]), ""]
    if meta["models"]:
        out += [
            "### Models",
            "",
            md_table(["role", "name", "sha256", "path", "note"], meta["models"]),
            "",
        ]
    if meta["prompts"]:
        out += ["### Prompt templates", "", md_table(["template", "sha256"], meta["prompts"]), ""]
    if meta["settings"]:
        out += ["### Settings", "", md_table(["setting", "value"], meta["settings"]), ""]
    return "\n".join(out).rstrip() + "\n"


# ---- HTML -------------------------------------------------------------------------------------


def render_html(run: RunFolder) -> str:
    s, records = run.summary, run.records
    metrics = s.get("metrics") or {}
    body = [f"<h1>localeval report: {esc(run.path.name)}</h1>"]
    dataset = s.get("dataset") or {}
    body.append(
        f'<p class="muted">{esc(dataset.get("source", ""))} · {len(records)} samples'
        f"{' · ' + esc(s['finished_at']) if s.get('finished_at') else ''}</p>"
    )
    status = _status(s, records)
    if status:
        body.append(f'<p class="warn">{esc(status)}</p>')
    body.append(
        "<h2>Scores</h2><p>Mean per score with a percentile bootstrap 95% confidence "
        "interval (2,000 resamples of the scored samples).</p>"
    )
    scored = [(k, m.get("mean"), m.get("ci95")) for k, m in metrics.items() if m.get("count")]
    if scored:
        body.append(forest_svg(scored))
    body.append(html_table(OVERVIEW_HEADER, _overview_rows(metrics), numeric=range(1, 7)))
    body.append(
        '<h2>Distributions</h2><p class="muted">Bars: samples per score bin; red line: '
        'mean; orange band: 95% CI of the mean.</p><div class="charts">'
    )
    for key, m in metrics.items():
        values = _values(records, key)
        if not values:
            continue
        body.append(
            f'<div class="card"><h3>{esc(key)}</h3>'
            f"{histogram_svg(key, values, m.get('mean'), m.get('ci95'))}"
            f'<div class="muted">mean {fmt(m.get("mean"))} · 95% CI {fmt_ci(m.get("ci95"))}'
            f" · n {m.get('count', 0)} · errors {m.get('errors', 0)}</div></div>"
        )
    body.append("</div><h2>Lowest-scoring samples</h2>")
    for key, owner in lowest_keys(metrics):
        body.append(f"<h3>{esc(key)}</h3>")
        for i, r in enumerate(lowest(records, key)):
            body.append(
                f"<details{' open' if i == 0 else ''}><summary>{esc(r.id)} · {esc(key)} = "
                f"{fmt(r.scores[key])} · line {r.line}</summary>"
            )
            rows = []
            if r.question:
                rows.append(("question", f'<span class="text">{esc(clip_text(r.question))}</span>'))
            if r.answer:
                rows.append(("answer", f'<span class="text">{esc(clip_text(r.answer))}</span>'))
            others = [
                f"{esc(k)} = {fmt(r.scores.get(k))}"
                for k in _owner_keys(metrics, owner)
                if k != key and k in r.scores
            ]
            if others:
                rows.append(("also", ", ".join(others)))
            if owner in r.details:
                rows.append(("explanation", details_html(r.details[owner])))
            body.append(
                '<table class="kv">'
                + "".join(f"<tr><th>{esc(a)}</th><td>{b}</td></tr>" for a, b in rows)
                + "</table></details>"
            )
    errors = _errors(records)
    if errors:
        body.append("<h2>Errors</h2>" + html_table(["id", "line", "metric", "error"], errors[:200]))
        if len(errors) > 200:
            body.append(f"<p>... and {len(errors) - 200} more (see results.jsonl)</p>")
    problems = dataset.get("input_errors") or []
    if problems:
        body.append(
            "<h2>Input rows skipped</h2>"
            + html_table(
                ["line", "id", "problem"],
                [[p.get("line"), p.get("id") or "", p.get("message")] for p in problems[:200]],
            )
        )
    meta = _metadata_rows(s)
    body.append("<h2>Run</h2>" + html_table(["item", "value"], meta["run"]))
    if meta["models"]:
        body.append(
            "<h3>Models</h3>"
            + html_table(["role", "name", "sha256", "path", "note"], meta["models"])
        )
    if meta["prompts"]:
        body.append(
            "<h3>Prompt templates</h3>" + html_table(["template", "sha256"], meta["prompts"])
        )
    if meta["settings"]:
        body.append("<h3>Settings</h3>" + html_table(["setting", "value"], meta["settings"]))
    return page(f"localeval report: {run.path.name}", "".join(body))
