"""The page kit: what every page localeval writes is made of — the run report (report.md,
report.html), the comparison (compare.md, compare.html) and the meta-eval page (meta_eval.md,
meta_eval.html) — and the plain-text tables printed in a terminal.

- numbers and text: `fmt`, `fmt_ci`, `clip_text`;
- tables: `text_table` (aligned columns for a terminal), `md_table`, `html_table`;
- Markdown cells: `md_cell` (dataset text made inert), `md_scalar` (a value, clipped);
- HTML: `esc`, `CSS`, `page` (one self-contained document: inline CSS, no script, a
  Content-Security-Policy that forbids any fetch);
- a metric's details (statements and verdicts, questions, TP/FP/FN, ...), generically:
  `details_md`, `details_html`, with 0/1 verdicts shown as ✓ / ✗ (`is_verdict`).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from localeval.safe import esc, terminal_safe

__all__ = [
    "CSS", "TEXT_LIMIT", "VERDICT_KEYS", "clip_text", "details_html", "details_md", "esc",
    "fmt", "fmt_ci", "html_table", "html_text", "is_verdict", "md_cell", "md_scalar", "md_table",
    "page", "text_table", "verdict_keys", "verdict_keys_of",
]

TEXT_LIMIT = 1200
VERDICT_KEYS = frozenset({"flag", "useful", "attributable", "supported", "relevant", "verdict"})
"""0/1 detail keys shown as ✓ / ✗ besides those the metrics declare (`@metric(verdict_keys=...)`:
"clear", "refused", ...): "verdict", the judge's verdict of most metrics and of a yes/no rubric,
and the keys of runs by earlier versions."""

# ---- numbers and text -------------------------------------------------------------------------


def fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def fmt_ci(ci: Iterable[float] | None, digits: int = 3) -> str:
    if not ci:
        return "-"
    lo, hi = list(ci)
    return f"[{lo:.{digits}f}, {hi:.{digits}f}]"


def clip_text(text: str, limit: int = TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more characters)"


@cache
def verdict_keys() -> frozenset[str]:
    """The 0/1 keys of any metric's details: VERDICT_KEYS and those every built-in declares."""
    from localeval.metrics import REGISTRY  # (lazy: only a page with details needs them)

    return VERDICT_KEYS.union(*(m.verdict_keys for m in REGISTRY.values()))


def verdict_keys_of(metric: str) -> frozenset[str]:
    """The 0/1 keys of one metric's details: VERDICT_KEYS and those it declares (a rubric, no
    built-in: those of any metric)."""
    from localeval.metrics import REGISTRY

    m = REGISTRY.get(metric)
    return VERDICT_KEYS.union(m.verdict_keys) if m is not None else verdict_keys()


def is_verdict(key: str, value: Any, keys: frozenset[str] | None = None) -> bool:
    """A 0/1 verdict-like field of a metric's details (shown as ✓ / ✗): its key among `keys`
    (default: those of any metric)."""
    return (key in (verdict_keys() if keys is None else keys) and not isinstance(value, bool)
            and value in (0, 1))


# ---- plain-text tables ------------------------------------------------------------------------


def text_table(rows: Sequence[Sequence[Any]], right: Iterable[int] = ()) -> list[str]:
    """Rows (the header first) as lines of aligned columns two spaces apart: left-aligned but
    for the columns in `right`; no trailing space. Cells are made terminal-safe (a control,
    bidi or line-break character of dataset text shows as its escape)."""
    cells = [[terminal_safe(c) for c in r] for r in rows]
    if not cells:
        return []
    wide, rjust = range(len(cells[0])), set(right)
    widths = [max(len(r[i]) for r in cells) for i in wide]
    return [
        "  ".join(c.rjust(w) if i in rjust else c.ljust(w)
                  for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
        for r in cells
    ]


# ---- Markdown ---------------------------------------------------------------------------------

# Every line break Markdown (or a terminal) honours: a cell must stay on its line.
_LINE_BREAKS = re.compile("[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+")
# Characters that could open HTML, an entity or a code span, or end a table cell; "](" would
# close an inline link. Emphasis characters (* _ ~) are left alone: they restyle text, they
# cannot start a block. A cell never starts a line (it follows "| " or "- name: "), and a
# leading "#" is escaped as well; "]:" is escaped everywhere, so that no cell (a bullet's text
# included) can be a link reference definition that every "[x]" of the page would then use.
_SPECIAL = str.maketrans({
    "\\": "\\\\", "|": "\\|", "`": "\\`", "&": "&amp;", "<": "&lt;", ">": "&gt;",
})


def md_cell(value: Any) -> str:
    """Dataset text as inert inline Markdown: one line, no HTML, no code span or link, no cell
    break, no heading marker at its start, and no terminal control or bidi character."""
    text = _LINE_BREAKS.sub(" ", str(value)).translate(_SPECIAL).replace("](", "\\](")
    text = text.replace("]:", "\\]:")
    if text.lstrip().startswith("#"):
        text = text.replace("#", "\\#", 1)
    return terminal_safe(text)


def md_table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def md_scalar(value: Any, key: str = "", keys: frozenset[str] | None = None) -> str:
    """One value as an inert Markdown cell: a verdict (is_verdict with `keys`) as ✓ / ✗, a float
    in 4 digits, a list or mapping as clipped JSON, anything else as clipped text."""
    if is_verdict(key, value, keys):
        return "✓" if value == 1 else "✗"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (Mapping, list)):
        return md_cell(clip_text(json.dumps(value, ensure_ascii=False, default=str), 300))
    return md_cell(clip_text(str(value), 600))


def details_md(value: Any, indent: str = "", keys: frozenset[str] | None = None) -> list[str]:
    """A metric's details (statements and verdicts, questions, TP/FP/FN, ...) as bullet lines;
    `keys`: its 0/1 keys (verdict_keys_of; default: those of any metric)."""
    if isinstance(value, Mapping):
        out = []
        for k, v in value.items():
            if isinstance(v, (Mapping, list)) and v:
                out.append(f"{indent}- {md_cell(k)}:")
                out += details_md(v, indent + "  ", keys)
            else:
                out.append(f"{indent}- {md_cell(k)}: {md_scalar(v, str(k), keys)}")
        return out
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, Mapping):  # verdict marks first: "- ✗ statement: ...; reason: ..."
                marks = [md_scalar(v, str(k), keys) + ("" if k == "verdict" else f" {md_cell(k)}")
                         for k, v in item.items() if is_verdict(str(k), v, keys)]
                rest = [f"{md_cell(k)}: {md_scalar(v, str(k), keys)}"
                        for k, v in item.items() if not is_verdict(str(k), v, keys)]
                out.append(f"{indent}- " + " ".join([*marks, "; ".join(rest)]).strip())
            else:
                out.append(f"{indent}- {md_scalar(item, keys=keys)}")
        return out
    return [f"{indent}- {md_scalar(value, keys=keys)}"]


# ---- HTML -------------------------------------------------------------------------------------

CSS = """
:root{--fg:#1d2430;--muted:#5b6577;--line:#d7dce4;--bg:#fff;--card:#f6f8fb;--bar:#4a7bd0;
--ci:#f3b13b;--mean:#c2372b;--ok:#1f7a3d;--bad:#b42318}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans","Noto Sans CJK SC",
"PingFang SC","Microsoft YaHei",sans-serif;color:var(--fg);background:var(--bg);margin:0;
line-height:1.45;font-size:15px}
main{max-width:1400px;margin:0 auto;padding:24px}
h1{font-size:1.6em;margin:0 0 4px}h2{margin-top:2em;border-bottom:1px solid var(--line);
padding-bottom:4px}h3{margin:1.2em 0 .4em}
.muted{color:var(--muted)}.warn{background:#fff4e5;border:1px solid #f3b13b;padding:8px 12px;
border-radius:6px}
table{border-collapse:collapse;margin:8px 0;max-width:100%}th,td{border:1px solid var(--line);
padding:4px 8px;text-align:left;vertical-align:top;overflow-wrap:break-word}
th{background:var(--card);overflow-wrap:normal}
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
.text{white-space:pre-wrap;overflow-wrap:break-word}
@media (max-width:1100px){td{overflow-wrap:anywhere}table.items thead{display:none}
table.items,table.items tbody,table.items tr,table.items td{display:block}
table.items tr{border:1px solid var(--line);margin:6px 0}table.items td{border:0;text-align:left}
table.items td::before{content:attr(data-label) ": ";font-weight:600;color:var(--muted)}}
code{font-size:.9em;word-break:break-all}
"""


def page(title: str, body: str, extra_css: str = "") -> str:
    """A complete, self-contained HTML document: the kit's CSS (+ `extra_css`) inline."""
    csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<link rel="icon" href="data:,">'
        f"<title>{esc(title)}</title><style>{CSS}{extra_css}</style></head>"
        f"<body><main>{body}</main></body></html>\n"
    )


def html_table(header: list[str], rows: list[list[Any]], numeric: Iterable[int] = ()) -> str:
    nums = set(numeric)
    head = "".join(f"<th>{heading(h)}</th>" for h in header)
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


def heading(name: object) -> str:
    """A column or row heading, escaped, that may wrap after an underscore (judge_<wbr>verdict):
    a table keeps whole words in its headings and still fits a narrow window."""
    return esc(name).replace("_", "_<wbr>")


def html_text(value: str, tag: str = "span") -> str:
    """Free text (a question, an answer) clipped, its line breaks kept."""
    return f'<{tag} class="text">{esc(clip_text(value))}</{tag}>'


def details_html(value: Any, depth: int = 0, keys: frozenset[str] | None = None) -> str:
    """A metric's details (statements and verdicts, questions, TP/FP/FN, ...), generically;
    `keys`: its 0/1 keys (verdict_keys_of; default: those of any metric)."""
    if depth > 6:
        text = json.dumps(value, ensure_ascii=False, default=str)
        return f"<code>{esc(clip_text(text, 300))}</code>"
    if isinstance(value, (Mapping, list)) and not value:
        return '<span class="muted">(none)</span>'
    if isinstance(value, Mapping):
        rows = "".join(
            f"<tr><th>{heading(k)}</th><td>{_cell(str(k), v, depth, keys)}</td></tr>"
            for k, v in value.items()
        )
        return f'<table class="kv">{rows}</table>'
    if isinstance(value, list):
        if all(isinstance(item, Mapping) for item in value):
            cols: list[str] = []
            for item in value:
                cols += [str(k) for k in item if str(k) not in cols]
            head = "<th>#</th>" + "".join(f"<th>{heading(c)}</th>" for c in cols)
            body = "".join(
                f'<tr><td class="num" data-label="#">{i}</td>'
                + "".join(f'<td data-label="{esc(c)}">{_cell(c, item.get(c), depth, keys)}</td>'
                          for c in cols)
                + "</tr>"
                for i, item in enumerate(value, 1)
            )
            return (f'<table class="items"><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
                    "</table>")
        items = "".join(f"<li>{details_html(v, depth + 1, keys)}</li>" for v in value)
        return f"<ol>{items}</ol>"
    if isinstance(value, float):
        return esc(f"{value:.4g}")
    if value is None:
        return '<span class="muted">-</span>'
    return html_text(str(value))


def _cell(key: str, value: Any, depth: int, keys: frozenset[str] | None) -> str:
    if is_verdict(key, value, keys):
        return '<span class="ok">✓ 1</span>' if value == 1 else '<span class="bad">✗ 0</span>'
    return details_html(value, depth + 1, keys)
