"""meta-eval's own output: the short terminal table, meta_eval.md and a self-contained
meta_eval.html (inline CSS, no script, no external resource) with the disagreements and the
judge's explanations (each row's `details`, rendered generically)."""

from __future__ import annotations

import html
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from localeval.meta_eval.analyse import KAPPA_CUT, PairResult, PairStats, RowResult, RowStats
from localeval.report.markdown import details_md, md_cell
from localeval.results.records import SampleRecord

SHOWN = 50  # disagreements written into the reports (all are listed in meta_eval.json)
TEXT_LIMIT = 1500

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Noto Sans CJK SC","PingFang SC",
"Microsoft YaHei",sans-serif;color:#1d2430;margin:0;line-height:1.45;font-size:15px}
main{max-width:1100px;margin:0 auto;padding:24px}h2{border-bottom:1px solid #d7dce4}
table{border-collapse:collapse;margin:6px 0}th,td{border:1px solid #d7dce4;padding:3px 7px;
text-align:left;vertical-align:top}th{background:#f6f8fb}td.num{text-align:right}
.muted{color:#5b6577}.warn{background:#fff4e5;border:1px solid #f3b13b;padding:8px 12px}
.ok{color:#1f7a3d;font-weight:600}.bad{color:#b42318;font-weight:600}
.text{white-space:pre-wrap;word-break:break-word}
section.case{border:1px solid #d7dce4;border-radius:6px;padding:4px 12px;margin:12px 0}
"""


def _f(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _ci(ci: Any) -> str:
    return "-" if not ci else f"[{ci[0]:.3f}, {ci[1]:.3f}]"


def _clip(text: str, limit: int = TEXT_LIMIT) -> str:
    return text if len(text) <= limit else text[:limit] + f"… ({len(text) - limit} more)"


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
        rows = [
            [
                g,
                str(s.pairs),
                _f(s.pairwise_accuracy),
                _ci(s.ci95),
                str(s.wins),
                str(s.ties),
                str(s.losses),
                str(s.unscored),
            ]
            for g, s in result.groups.items()
            if isinstance(s, PairStats)
        ]
        return header, rows
    header = ["group", "rows", "scored", "AUROC", "95% CI", "base rate", "agreement", "kappa",
              "Spearman", "95% CI", "Kendall tau-b"]
    rows = [
        [
            g,
            str(s.rows),
            str(s.scored),
            _f(s.auroc),
            _ci(s.auroc_ci95),
            _f(s.base_rate),
            _f(s.agreement),
            _f(s.kappa),
            _f(s.spearman),
            _ci(s.spearman_ci95),
            _f(s.kendall_tau_b),
        ]
        for g, s in result.groups.items()
        if isinstance(s, RowStats)
    ]
    return header, rows


def cost_line(result: Any) -> str:
    j = result.judge
    text = f"{_f(result.seconds_per_sample, 2)} s per sample"
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
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]
    lines = [
        "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()
        for r in [header, *rows]
    ]
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


def _verdict_key(key: str) -> bool:
    return "verdict" in key.lower()


def _scalar(key: str, value: Any) -> str:
    if _verdict_key(key) and value in (0, 1) and not isinstance(value, bool):
        return f"{'✓' if value == 1 else '✗'} {value}"
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, (Mapping, list)):
        return md_cell(_clip(json.dumps(value, ensure_ascii=False, default=str), 400))
    return md_cell(_clip(str(value), 800))


def _details_html(value: Any, depth: int = 0) -> str:
    esc = html.escape
    if depth > 6 or not isinstance(value, (Mapping, list)):
        if isinstance(value, float):
            return esc(f"{value:.4g}")
        if depth > 6:
            value = json.dumps(value, ensure_ascii=False, default=str)
        return f'<span class="text">{esc(_clip(str(value)))}</span>'
    if not value:
        return '<span class="muted">(none)</span>'
    if isinstance(value, Mapping):
        return (
            "<table>"
            + "".join(
                f"<tr><th>{esc(str(k))}</th><td>{_cell(str(k), v, depth)}</td></tr>"
                for k, v in value.items()
            )
            + "</table>"
        )
    if all(isinstance(item, Mapping) for item in value):
        cols: list[str] = []
        for item in value:
            cols += [str(k) for k in item if str(k) not in cols]
        head = "".join(f"<th>{esc(c)}</th>" for c in cols)
        body = "".join(
            "<tr>" + "".join(f"<td>{_cell(c, item.get(c), depth)}</td>" for c in cols) + "</tr>"
            for item in value
        )
        return f"<table><tr>{head}</tr>{body}</table>"
    return "<ol>" + "".join(f"<li>{_details_html(v, depth + 1)}</li>" for v in value) + "</ol>"


def _cell(key: str, value: Any, depth: int) -> str:
    if _verdict_key(key) and value in (0, 1) and not isinstance(value, bool):
        return '<span class="ok">✓ 1</span>' if value == 1 else '<span class="bad">✗ 0</span>'
    if value is None:
        return '<span class="muted">-</span>'
    return _details_html(value, depth + 1)


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
            f"{case.preferred}; a = {_f(case.score_a)}, b = {_f(case.score_b)}"
        )
    human = [
        f"label {case.label}" if case.label is not None else "",
        f"human score {case.human_score:g}" if case.human_score is not None else "",
    ]
    return (
        f"{case.id} (line {case.line}, {case.language}): {', '.join(h for h in human if h)}"
        f"; judge {_f(case.score)}; wrongly ordered against "
        f"{_f(case.discordance, 2)} of the comparable rows"
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
    owner = result.score.split(".", 1)[0].split("@", 1)[0]
    header, rows = group_rows(result)
    out = [
        f"# localeval meta-eval: {md_cell(result.score)}",
        "",
        f"Data: {md_cell(result.data)} — {md_cell(headline(result))}.",
        "",
        f"Rule: {rule(result)}.",
        "",
        "| " + " | ".join(header) + " |",
        "|" + "|".join("---" for _ in header) + "|",
    ]
    out += ["| " + " | ".join(md_cell(c) for c in r) + " |" for r in rows]
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
            out += [f"Pair meta: {_scalar('', case.meta)}", ""]
        first = records.get(_sides(case)[0][1])
        if first is not None and first.question:
            out += [f"Question: {_scalar('', first.question)}", ""]
        for label, rid, score in _sides(case):
            rec = records.get(rid)
            out.append(f"**{label}** — score {_f(score)}")
            if rec is not None and rec.answer:
                out.append(f"- answer: {_scalar('', rec.answer)}")
            for key, value in _record_parts(rec, owner).items():
                if key == "details":
                    out += ["- details:", *details_md(value, "  ")] if value else []
                else:
                    out.append(f"- {key}: {_scalar('', value)}")
            out.append("")
    if len(result.disagreements) > SHOWN:
        out.append(f"... and {len(result.disagreements) - SHOWN} more (meta_eval.json lists all).")
    if result.status.input_errors:
        out += ["", "## Input lines skipped", "",
                *(f"- {md_cell(e)}" for e in result.status.input_errors)]
    return "\n".join(out).rstrip() + "\n"


def render_html(result: Any, records: Mapping[str, SampleRecord]) -> str:
    esc = html.escape
    owner = result.score.split(".", 1)[0].split("@", 1)[0]
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
    body.append(
        "<table><tr>"
        + "".join(f"<th>{esc(h)}</th>" for h in header)
        + "</tr>"
        + "".join(
            "<tr>"
            + "".join(
                f'<td class="num">{esc(c)}</td>' if i else f"<td>{esc(c)}</td>"
                for i, c in enumerate(r)
            )
            + "</tr>"
            for r in rows
        )
        + "</table>"
    )
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
            parts.append(f"<div><b>Pair meta</b>: {_details_html(case.meta)}</div>")
        first = records.get(_sides(case)[0][1])
        if first is not None and first.question:
            parts.append(
                f'<p><b>Question</b>: <span class="text">{esc(_clip(first.question))}</span></p>'
            )
        for label, rid, score in _sides(case):
            rec = records.get(rid)
            parts.append(f"<h4>{esc(label)} — score {esc(_f(score))}</h4>")
            if rec is not None and rec.answer:
                parts.append(f'<p class="text">{esc(_clip(rec.answer))}</p>')
            for key, value in _record_parts(rec, owner).items():
                parts.append(f"<div><b>{esc(key)}</b>: {_details_html(value)}</div>")
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
    csp = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        f"<title>meta-eval {esc(result.score)}</title><style>{CSS}</style></head>"
        f"<body><main>{''.join(body)}</main></body></html>\n"
    )


def write_reports(out_dir: Path, result: Any, records: Mapping[str, SampleRecord]) -> list[Path]:
    md, page = Path(out_dir) / "meta_eval.md", Path(out_dir) / "meta_eval.html"
    md.write_text(render_markdown(result, records), encoding="utf-8")
    page.write_text(render_html(result, records), encoding="utf-8")
    return [md, page]
