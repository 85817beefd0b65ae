"""report.md: the report view laid out as Markdown."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from localeval.report.view import BINS, HEADERS, SCORES_NOTE, ReportView, clip_text, fmt, is_verdict

MAX_ROWS = 50


def md_cell(value: Any) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ").replace("\r", " ")


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
                out.append(f"{indent}- {k}:")
                out += details_md(v, indent + "  ")
            else:
                out.append(f"{indent}- {k}: {_scalar(str(k), v)}")
        return out
    if isinstance(value, list):
        out = []
        for item in value:
            if isinstance(item, Mapping):  # verdict marks first: "- ✗ statement: ...; reason: ..."
                marks = [_scalar(str(k), v) + ("" if k == "verdict" else f" {k}")
                         for k, v in item.items() if is_verdict(str(k), v)]
                rest = [f"{k}: {_scalar(str(k), v)}"
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
        return clip_text(json.dumps(value, ensure_ascii=False, default=str), 300)
    return clip_text(str(value), 600).replace("\n", " ")


def _table_section(
    title: str, header: list[str], rows: list[list[Any]], limit: int | None = MAX_ROWS
) -> list[str]:
    if not rows:
        return []
    out = [title, "", md_table(header, rows[:limit]), ""]
    if limit is not None and len(rows) > limit:
        out += [f"... and {len(rows) - limit} more (see results.jsonl)", ""]
    return out


def render_markdown(view: ReportView) -> str:
    out = [f"# {view.title}", ""]
    if view.status:
        out += [f"> **{view.status}**", ""]
    out += ["## Scores", "", SCORES_NOTE, "", md_table(HEADERS["overview"], view.overview), ""]
    out += ["## Distributions", ""]
    for d in view.distributions:
        peak = max(d.counts) or 1
        out += [f"### {d.key}", "", "| bin | n | |", "|---|---:|---|"]
        for i, c in enumerate(d.counts):
            bar = "█" * round(c / peak * 20)
            out.append(f"| {i / BINS:.1f}–{(i + 1) / BINS:.1f} | {c} | {bar} |")
        out.append("")
    out += ["## Lowest-scoring samples", ""]
    for low in view.lowest:
        out += [f"### {low.key}", ""]
        for r in low.samples:
            out += [f"#### {r.id} (line {r.line}): {low.key} = {fmt(r.score)}", ""]
            if r.question:
                out.append(f"- question: {md_cell(clip_text(r.question, 600))}")
            if r.answer:
                out.append(f"- answer: {md_cell(clip_text(r.answer, 600))}")
            if r.also:
                out.append("- also: " + ", ".join(r.also))
            if r.details is not None:
                out += ["- explanation:", *details_md(r.details, "  ")]
            out.append("")
    out += _table_section("## Errors", HEADERS["errors"], view.errors)
    out += _table_section("## Input rows skipped", HEADERS["problems"], view.problems)
    meta = view.meta
    out += ["## Run", "", md_table(HEADERS["run"], meta["run"]), ""]
    out += _table_section("### Models", HEADERS["models"], meta["models"], None)
    out += _table_section("### Prompt templates", HEADERS["prompts"], meta["prompts"], None)
    out += _table_section("### Settings", HEADERS["settings"], meta["settings"], None)
    return "\n".join(out).rstrip() + "\n"
