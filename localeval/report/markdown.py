"""report.md: the report view laid out as Markdown."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from localeval.report.view import (
    BINS,
    HEADERS,
    SCORES_NOTE,
    ReportView,
    clip_text,
    fmt,
    is_verdict,
)
from localeval.safe import terminal_safe

MAX_ROWS = 50  # at most view.ROWS_KEPT: the error rows the view keeps


# Every line break Markdown (or a terminal) honours: a cell must stay on its line.
_LINE_BREAKS = re.compile("[\r\n\x0b\x0c\x1c-\x1e\x85\u2028\u2029]+")
# Characters that could open HTML, an entity or a code span, or end a table cell; "](" would
# close an inline link. Emphasis characters (* _ ~) are left alone: they restyle text, they
# cannot start a block. A cell never starts a line (it follows "| " or "- name: "), and a
# leading "#" is escaped as well.
_SPECIAL = str.maketrans({
    "\\": "\\\\", "|": "\\|", "`": "\\`", "&": "&amp;", "<": "&lt;", ">": "&gt;",
})


def md_cell(value: Any) -> str:
    """Dataset text as inert inline Markdown: one line, no HTML, no code span or link, no cell
    break, no heading marker at its start, and no terminal control or bidi character."""
    text = _LINE_BREAKS.sub(" ", str(value)).translate(_SPECIAL).replace("](", "\\](")
    if text.lstrip().startswith("#"):
        text = text.replace("#", "\\#", 1)
    return terminal_safe(text)


def md_table(header: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    lines += ["| " + " | ".join(md_cell(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def details_md(value: Any, indent: str = "") -> list[str]:
    """A metric's details (statements and verdicts, questions, TP/FP/FN, ...) as bullet lines."""
    if isinstance(value, Mapping):
        out = []
        for k, v in value.items():
            if isinstance(v, (Mapping, list)) and v:
                out.append(f"{indent}- {md_cell(k)}:")
                out += details_md(v, indent + "  ")
            else:
                out.append(f"{indent}- {md_cell(k)}: {_scalar(str(k), v)}")
        return out
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, Mapping):  # verdict marks first: "- ✗ statement: ...; reason: ..."
                marks = [_scalar(str(k), v) + ("" if k == "verdict" else f" {md_cell(k)}")
                         for k, v in item.items() if is_verdict(str(k), v)]
                rest = [f"{md_cell(k)}: {_scalar(str(k), v)}"
                        for k, v in item.items() if not is_verdict(str(k), v)]
                out.append(f"{indent}- " + " ".join([*marks, "; ".join(rest)]).strip())
            else:
                out.append(f"{indent}- {_scalar('', item)}")
        return out
    return [f"{indent}- {_scalar('', value)}"]


def _scalar(key: str, value: Any) -> str:
    if is_verdict(key, value):
        return "✓" if value == 1 else "✗"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (Mapping, list)):
        return md_cell(clip_text(json.dumps(value, ensure_ascii=False, default=str), 300))
    return md_cell(clip_text(str(value), 600))


def _table_section(
    title: str, header: list[str], rows: list[list[Any]], limit: int | None = MAX_ROWS,
    total: int | None = None,
) -> list[str]:
    """A table of the first `limit` rows; `total`: how many rows there are (default: all given)."""
    if not rows:
        return []
    total = len(rows) if total is None else total
    out = [title, "", md_table(header, rows[:limit]), ""]
    if limit is not None and total > limit:
        out += [f"... and {total - limit} more (see results.jsonl)", ""]
    return out


def render_markdown(view: ReportView) -> str:
    out = [f"# {md_cell(view.title)}", ""]
    if view.status:
        out += [f"> **{md_cell(view.status)}**", ""]
    out += ["## Scores", "", SCORES_NOTE, "", md_table(HEADERS["overview"], view.overview), ""]
    out += ["## Distributions", ""]
    for d in view.distributions:
        peak = max(d.counts) or 1
        out += [f"### {md_cell(d.key)}", "", "| bin | n | |", "|---|---:|---|"]
        for i, c in enumerate(d.counts):
            bar = "█" * round(c / peak * 20)
            out.append(f"| {i / BINS:.1f}–{(i + 1) / BINS:.1f} | {c} | {bar} |")
        out.append("")
    out += ["## Lowest-scoring samples", ""]
    for low in view.lowest:
        out += [f"### {md_cell(low.key)}", ""]
        for r in low.samples:
            title = f"{md_cell(r.id)} (line {r.line}): {md_cell(low.key)} = {fmt(r.score)}"
            out += [f"#### {title}", ""]
            if r.question:
                out.append(f"- question: {md_cell(clip_text(r.question, 600))}")
            if r.answer:
                out.append(f"- answer: {md_cell(clip_text(r.answer, 600))}")
            if r.also:
                out.append("- also: " + ", ".join(md_cell(a) for a in r.also))
            if r.details is not None:
                out += ["- explanation:", *details_md(r.details, "  ")]
            out.append("")
    out += _table_section("## Errors", HEADERS["errors"], view.errors, total=view.n_errors)
    out += _table_section("## Input rows skipped", HEADERS["problems"], view.problems)
    meta = view.meta
    out += ["## Run", "", md_table(HEADERS["run"], meta["run"]), ""]
    out += _table_section("### Models", HEADERS["models"], meta["models"], None)
    out += _table_section("### Prompt templates", HEADERS["prompts"], meta["prompts"], None)
    out += _table_section("### Settings", HEADERS["settings"], meta["settings"], None)
    return "\n".join(out).rstrip() + "\n"
