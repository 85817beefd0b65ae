"""meta-eval's own output, on the page kit: the short terminal table, meta_eval.md and a
self-contained meta_eval.html with the disagreements and the judge's explanations (each row's
`details`, rendered as in the run report). The figures come from `localeval.meta_eval.analyse`."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from localeval.meta_eval.analyse import KAPPA_CUT, PairResult, PairStats, RowResult, RowStats
from localeval.names import owner_of
from localeval.report.kit import (
    details_html,
    details_md,
    esc,
    fmt,
    fmt_ci,
    html_table,
    html_text,
    md_cell,
    md_scalar,
    md_table,
    page,
    text_table,
)
from localeval.results.records import SampleRecord

SHOWN = 50  # disagreements written into the reports (all are listed in meta_eval.json)

CASE_CSS = "section.case{border:1px solid var(--line);border-radius:6px;padding:4px 12px;" \
    "margin:12px 0}\n"


def _unit(result: Any) -> str:
    return "pairs" if result.kind == "pairs" else "rows"


def headline(result: Any) -> str:
    s = result.status
    text = f"{s.done} of {s.selected} {_unit(result)} judged ({s.in_file} in the file"
    if result.kind == "pairs":
        text += f"; {s.no_preference} without a human preference, not judged"
    text += ")"
    if s.input_errors:
        text += f"; {len(s.input_errors)} input line(s) skipped"
    return text + ("" if s.complete else " — PARTIAL: continue with --resume")


def group_rows(result: Any) -> tuple[list[str], list[list[str]]]:
    """The agreement table: header and one row per group ('all', then languages)."""
    if result.kind == "pairs":
        header = ["group", "pairs", "accuracy", "95% CI", "wins", "ties", "losses", "unscored"]
        return header, [
            [g, str(s.pairs), fmt(s.pairwise_accuracy), fmt_ci(s.ci95), str(s.wins), str(s.ties),
             str(s.losses), str(s.unscored)]
            for g, s in result.groups.items() if isinstance(s, PairStats)
        ]
    header = ["group", "rows", "scored", "AUROC", "95% CI", "base rate", "agreement", "kappa",
              "Spearman", "95% CI", "Kendall tau-b"]
    return header, [
        [g, str(s.rows), str(s.scored), fmt(s.auroc), fmt_ci(s.auroc_ci95), fmt(s.base_rate),
         fmt(s.agreement), fmt(s.kappa), fmt(s.spearman), fmt_ci(s.spearman_ci95),
         fmt(s.kendall_tau_b)]
        for g, s in result.groups.items() if isinstance(s, RowStats)
    ]


def cost_line(result: Any) -> str:
    j = result.judge
    text = f"{fmt(result.seconds_per_sample, 2)} s per sample"
    if j:
        text += (
            f"; judge calls {j.get('calls', 0)} (+{j.get('cached', 0)} cached), tokens "
            f"{j.get('prompt_tokens', 0)} in ({j.get('prompt_tokens_processed', 0)} read) / "
            f"{j.get('completion_tokens', 0)} generated + {j.get('forced_tokens', 0)} read "
            "as answer chunks"
        )
    return text + f"; {len(result.sessions)} session(s)"


def rule(result: Any) -> str:
    """How the figures are computed, in one sentence."""
    if result.kind == "pairs":
        return str(result.tie_rule)
    return (
        "AUROC: the chance that a row labelled 1 scores above one labelled 0 (ties ½); "
        f"agreement and Cohen's kappa: the score cut at {KAPPA_CUT} (≥ → 1) against the label, "
        "base rate = share labelled 1; Spearman and Kendall tau-b against human_score; "
        "rows without a score are left out"
    )


def table(result: Any) -> str:
    """The short table printed after a run."""
    header, rows = group_rows(result)
    lines = text_table([header, *rows])
    rule = (
        "ties count ½, an unscored pair 0"
        if result.kind == "pairs"
        else f"AUROC: label 1 above label 0, ties ½; kappa: score ≥ {KAPPA_CUT} against the label"
    )
    return "\n".join(
        [f"meta-eval {result.score}: {headline(result)}", *lines, f"{rule}; {cost_line(result)}"]
    )


# ---- the disagreements ------------------------------------------------------------------------


def _cases(result: Any) -> list[PairResult] | list[RowResult]:
    items = result.pairs if result.kind == "pairs" else result.rows
    by_id = {(i.pair_id if isinstance(i, PairResult) else i.id): i for i in items or []}
    return [by_id[k] for k in result.disagreements if k in by_id]


def _sides(case: PairResult | RowResult) -> list[tuple[str, str, float | None]]:
    """(label, row id, score) of the rows behind one disagreement."""
    if isinstance(case, PairResult):
        return [
            (
                f"{s}{' (preferred)' if case.preferred == s else ''}",
                f"{case.pair_id}/{s}",
                case.score_a if s == "a" else case.score_b,
            )
            for s in ("a", "b")
        ]
    return [("row", case.id, case.score)]


def _case_title(case: PairResult | RowResult) -> str:
    if isinstance(case, PairResult):
        what = {0.5: "tie", 0.0: "loss"}.get(case.outcome or 0.0, "loss")
        return (
            f"{case.pair_id} — {what} (line {case.line}, {case.language}): people prefer "
            f"{case.preferred}; a = {fmt(case.score_a)}, b = {fmt(case.score_b)}"
        )
    human = [
        f"label {case.label}" if case.label is not None else "",
        f"human score {case.human_score:g}" if case.human_score is not None else "",
    ]
    return (
        f"{case.id} (line {case.line}, {case.language}): {', '.join(h for h in human if h)}"
        f"; judge {fmt(case.score)}; wrongly ordered against "
        f"{fmt(case.discordance, 2)} of the comparable rows"
    )


def _record_parts(rec: SampleRecord | None, owner: str) -> dict[str, Any]:
    if rec is None:
        return {}
    parts: dict[str, Any] = {}
    if rec.errors.get(owner):
        parts["error"] = rec.errors[owner]
    if rec.skipped.get(owner):
        parts["skipped"] = rec.skipped[owner]
    parts["details"] = rec.details.get(owner) or {}
    return parts


# ---- Markdown and HTML ------------------------------------------------------------------------


def render_markdown(result: Any, records: Mapping[str, SampleRecord]) -> str:
    owner = owner_of(result.score)
    header, rows = group_rows(result)
    out = [
        f"# localeval meta-eval: {md_cell(result.score)}",
        "",
        f"Data: {md_cell(result.data)} — {md_cell(headline(result))}.",
        "",
        f"Rule: {rule(result)}.",
        "",
        md_table(header, rows),
    ]
    judge = result.models.get("judge") or {}
    out += [
        "",
        f"Cost: {cost_line(result)}.",
        f"Judge: {md_cell(judge.get('name', '-'))} "
        f"(sha256 {md_cell(str(judge.get('sha256', '-'))[:12])}), "
        f"metrics {md_cell(', '.join(result.metrics))}.",
        "",
        f"## Disagreements ({len(result.disagreements)})",
        "",
    ]
    if not result.disagreements:
        out.append("None: the judge agrees with people on every judged item.")
    for case in _cases(result)[:SHOWN]:
        out += [f"### {md_cell(_case_title(case))}", ""]
        if case.unscored:
            out += [f"No score: {md_cell(case.unscored)}", ""]
        if isinstance(case, PairResult) and case.meta:
            out += [f"Pair meta: {md_scalar(case.meta)}", ""]
        first = records.get(_sides(case)[0][1])
        if first is not None and first.question:
            out += [f"Question: {md_scalar(first.question)}", ""]
        for label, rid, score in _sides(case):
            rec = records.get(rid)
            out.append(f"**{label}** — score {fmt(score)}")
            if rec is not None and rec.answer:
                out.append(f"- answer: {md_scalar(rec.answer)}")
            for key, value in _record_parts(rec, owner).items():
                if key == "details":
                    out += ["- details:", *details_md(value, "  ")] if value else []
                else:
                    out.append(f"- {key}: {md_scalar(value)}")
            out.append("")
    if len(result.disagreements) > SHOWN:
        out.append(f"... and {len(result.disagreements) - SHOWN} more (meta_eval.json lists all).")
    if result.status.input_errors:
        out += ["", "## Input lines skipped", "",
                *(f"- {md_cell(e)}" for e in result.status.input_errors)]
    return "\n".join(out).rstrip() + "\n"


def render_html(result: Any, records: Mapping[str, SampleRecord]) -> str:
    owner = owner_of(result.score)
    header, rows = group_rows(result)
    body = [
        f"<h1>localeval meta-eval: {esc(result.score)}</h1>",
        f"<p>Data <code>{esc(result.data)}</code> — {esc(headline(result))}.</p>",
    ]
    if not result.status.complete:
        body.append(
            '<p class="warn">Partial results: run the same command with --resume to '
            "judge the rest.</p>"
        )
    body.append(f'<p class="muted">{esc(rule(result))}.</p>')
    body.append(html_table(header, rows, numeric=range(1, len(header))))
    judge = result.models.get("judge") or {}
    body.append(
        f"<p>Cost: {esc(cost_line(result))}. Judge: {esc(str(judge.get('name', '-')))}"
        f" (sha256 {esc(str(judge.get('sha256', '-'))[:12])}), metrics "
        f"{esc(', '.join(result.metrics))}.</p>"
    )
    body.append(f"<h2>Disagreements ({len(result.disagreements)})</h2>")
    if not result.disagreements:
        body.append("<p>None: the judge agrees with people on every judged item.</p>")
    for case in _cases(result)[:SHOWN]:
        parts = [f"<h3>{esc(_case_title(case))}</h3>"]
        if case.unscored:
            parts.append(f'<p class="bad">No score: {esc(case.unscored)}</p>')
        if isinstance(case, PairResult) and case.meta:
            parts.append(f"<div><b>Pair meta</b>: {details_html(case.meta)}</div>")
        first = records.get(_sides(case)[0][1])
        if first is not None and first.question:
            parts.append(f"<p><b>Question</b>: {html_text(first.question)}</p>")
        for label, rid, score in _sides(case):
            rec = records.get(rid)
            parts.append(f"<h4>{esc(label)} — score {esc(fmt(score))}</h4>")
            if rec is not None and rec.answer:
                parts.append(html_text(rec.answer, "p"))
            for key, value in _record_parts(rec, owner).items():
                parts.append(f"<div><b>{esc(key)}</b>: {details_html(value)}</div>")
        body.append(f'<section class="case">{"".join(parts)}</section>')
    if len(result.disagreements) > SHOWN:
        body.append(
            f"<p>... and {len(result.disagreements) - SHOWN} more (meta_eval.json lists all).</p>"
        )
    if result.status.input_errors:
        body.append(
            "<h2>Input lines skipped</h2><ul>"
            + "".join(f"<li>{esc(e)}</li>" for e in result.status.input_errors)
            + "</ul>"
        )
    return page(f"meta-eval {result.score}", "".join(body), CASE_CSS)


def write_reports(out_dir: Path, result: Any, records: Mapping[str, SampleRecord]) -> list[Path]:
    md, html_path = Path(out_dir) / "meta_eval.md", Path(out_dir) / "meta_eval.html"
    md.write_text(render_markdown(result, records), encoding="utf-8")
    html_path.write_text(render_html(result, records), encoding="utf-8")
    return [md, html_path]
