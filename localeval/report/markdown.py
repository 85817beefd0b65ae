"""report.md: the report view laid out as Markdown."""

from __future__ import annotations

from typing import Any

from localeval.report.kit import clip_text, details_md, fmt, md_cell, md_table
from localeval.report.view import (
    BINS,
    CORRECTED_HEADER,
    CORRECTED_NOTE,
    HEADERS,
    RUBRICS_NOTE,
    SCORES_NOTE,
    ReportView,
)

MAX_ROWS = 50  # at most view.ROWS_KEPT: the error rows the view keeps


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
    if view.calibration:
        out += [f"> {md_cell(view.calibration)}", ""]
    out += ["## Scores", "", SCORES_NOTE, "", md_table(HEADERS["overview"], view.overview), ""]
    if view.same:
        out += [md_cell(view.same), ""]
    if view.shield:
        out += [f"> {md_cell(view.shield)}", ""]
    if view.rubrics:
        out += ["### Rubrics", "", RUBRICS_NOTE, "", md_table(HEADERS["rubrics"], view.rubrics), ""]
    if view.corrected or view.corrected_lines:
        out += ["## Corrected by human labels", "", CORRECTED_NOTE, ""]
        if view.corrected:
            out += [md_table(CORRECTED_HEADER, view.corrected), ""]
        out += [f"- {md_cell(line)}" for line in view.corrected_lines] + [""]
    if view.diagnosis is not None:
        from localeval.report import diagnosis

        out += diagnosis.markdown(view.diagnosis)
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
                out += ["- explanation:", *details_md(r.details, "  ", low.verdict_keys)]
            out.append("")
    out += _chats(view)
    out += _table_section("## Errors", HEADERS["errors"], view.errors, total=view.n_errors)
    out += _table_section("## Input rows skipped", HEADERS["problems"], view.problems)
    meta = view.meta
    out += ["## Run", "", md_table(HEADERS["run"], meta["run"]), ""]
    out += _table_section("### Models", HEADERS["models"], meta["models"], None)
    out += _table_section("### Prompt templates", HEADERS["prompts"], meta["prompts"], None)
    out += _table_section("### Settings", HEADERS["settings"], meta["settings"], None)
    return "\n".join(out).rstrip() + "\n"


def _chats(view: ReportView) -> list[str]:
    """The conversations as chats: each exchange, the assistant reply with its scores and what
    failed on it (docs/conversations.md)."""
    if not view.chats:
        return []
    out = ["## Conversations", "", f"The first {len(view.chats)} conversations; each score of "
           "a conversation is the mean over its assistant turns.", ""]
    for c in view.chats:
        title = f"{md_cell(c.id)} (line {c.line})"
        out += [f"### {title}" + (f": {', '.join(c.scores)}" if c.scores else ""), ""]
        for t in c.turns:
            if t.asked is not None:
                out.append(f"- **user**: {md_cell(clip_text(t.asked, 600))}")
            if t.standalone:
                out.append(f"  - standalone: {md_cell(clip_text(t.standalone, 600))}")
            out.append(f"- **assistant** (turn {t.turn}): {md_cell(clip_text(t.answer, 600))}")
            if t.scores:
                out.append(f"  - scores: {md_cell(', '.join(t.scores))}")
            out += [f"  - {md_cell(clip_text(f, 300))}" for f in t.failed]
        out.append("")
    return out
