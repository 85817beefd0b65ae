"""The report's diagnosis: where a run's wrong and missing claims come from.

Read from the diagnosis metrics' details (metrics/diagnosis.py): each answer claim's class and
each ground-truth claim's class (metrics/claims/matrix.py), pooled over the run's samples:

- retriever: ground-truth claims no context holds (`not_retrieved`);
- generator: ground-truth claims retrieved but not stated (`unused`), wrong answer claims copied
  from a relevant or an irrelevant context (noise), wrong ones from no context (hallucination).

Drawn as two stacked bars (HTML) or a table (Markdown), with per sample each answer claim that
is not plainly supported, marked by its class. A sample the diagnosis left unscored without
classing a claim (every context empty: no retrieval to diagnose) counts no claim; the section
says how many were left out and why. Imported only for a run with these metrics.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from localeval.data.conversation import turn_id
from localeval.metrics.claims.matrix import ANSWER_CLASSES, NO_TRUTH, TRUTH_CLASSES
from localeval.report.kit import esc, html_table, md_cell, md_table

ANSWER_OWNERS = ("noise_sensitivity", "hallucination", "self_knowledge", "context_utilization")
TRUTH_OWNERS = (*ANSWER_OWNERS, "claim_recall")  # claim_recall alone does not read the answer
"""The metrics whose details hold the classes, the answer-side ones first (any one of them is
enough)."""
SOURCE = {"not_retrieved": "retriever", "unused": "generator", "noise_relevant": "generator",
          "noise_irrelevant": "generator", "hallucination": "generator",
          "self_knowledge": "generator (own knowledge)", "supported": "-", "used": "-",
          "retrieved": "-"}
"""Which part of the RAG system a class of claim comes from."""
COLOURS = {"supported": "#4c9a6a", "self_knowledge": "#8ab4d8", "noise_relevant": "#e0a040",
           "noise_irrelevant": "#d07030", "hallucination": "#c0392b", "used": "#4c9a6a",
           "unused": "#e0a040", "not_retrieved": "#7f5aa2", "retrieved": "#4c9a6a"}
SAMPLES_KEPT = 50
"""Samples whose answer claims the report lists."""


@dataclass
class SampleClaims:
    """A sample's answer claims that are not plainly supported (each with its class)."""

    id: str
    line: int
    claims: list[Mapping[str, Any]]


@dataclass
class RunDiagnosis:
    """Claims of each class over the run, the first samples with a claim that is not plainly
    supported, and the samples left out (no claim classed), counted by reason."""

    answer: dict[str, int] = field(default_factory=lambda: dict.fromkeys(ANSWER_CLASSES, 0))
    truth: dict[str, int] = field(default_factory=dict)
    samples: list[SampleClaims] = field(default_factory=list)
    n_samples: int = 0
    more: int = 0
    left_out: dict[str, int] = field(default_factory=dict)

    def add_record(self, id_: str, line: int, details: Mapping[str, Any]) -> None:
        """Count one record's claims: a row's, or each assistant turn's of a conversation
        (`details.turns`, localeval/conversation.py; listed as `<id>#turn<n>`)."""
        turns = [t for t in details.get("turns") or []
                 if isinstance(t, Mapping) and isinstance(t.get("details"), Mapping)]
        self.add(id_, line, details, count_left_out=not turns)  # a conversation: its turns
        for t in turns:
            self.add(turn_id(id_, t.get("turn")), line, t["details"])

    def add(self, id_: str, line: int, details: Mapping[str, Any], *,
            count_left_out: bool = True) -> None:
        """Count one sample's claims (its diagnosis metrics' details), or the sample as left
        out when a diagnosis metric left it unscored without classing a claim."""
        answer = next((d["answer_claims"] for k in ANSWER_OWNERS
                       if isinstance(d := details.get(k), Mapping) and "answer_claims" in d), None)
        truth = next((d["truth_claims"] for k in TRUTH_OWNERS
                      if isinstance(d := details.get(k), Mapping) and "truth_claims" in d), None)
        if answer is None and truth is None:
            reason = next((d["unscored_reason"] for k in TRUTH_OWNERS
                           if isinstance(d := details.get(k), Mapping)
                           and isinstance(d.get("unscored_reason"), str)), None)
            if reason is not None and count_left_out:
                self.left_out[reason] = self.left_out.get(reason, 0) + 1
            return
        truth, answer = _classed(truth), _classed(answer)
        if truth == []:  # nothing its answer claims are right or wrong against
            if count_left_out:
                self.left_out[NO_TRUTH] = self.left_out.get(NO_TRUTH, 0) + 1
            return
        self.n_samples += 1
        if truth is not None and not self.truth:  # the classes this run's metrics give
            self.truth = dict.fromkeys(
                [c for c in TRUTH_CLASSES if c != "retrieved"]
                if any(k in details for k in ANSWER_OWNERS) else ["retrieved", "not_retrieved"],
                0)
        for c in truth or []:
            self.truth[c["class"]] = self.truth.get(c["class"], 0) + 1
        for c in answer or []:
            self.answer[c["class"]] = self.answer.get(c["class"], 0) + 1
        marked = [c for c in answer or [] if c["class"] != "supported"]
        if marked and len(self.samples) < SAMPLES_KEPT:
            self.samples.append(SampleClaims(id_, line, marked))
        elif marked:
            self.more += 1

    def rows(self) -> list[list[Any]]:
        """Per class: the claims, their share of their side, where they come from."""
        out = []
        for side, counts, meaning in (("ground truth", self.truth, TRUTH_CLASSES),
                                      ("answer", self.answer, ANSWER_CLASSES)):
            total = sum(counts.values())
            for cls, n in counts.items():
                share = f"{n / total:.3f}" if total else "-"
                out.append([side, cls, meaning.get(cls, cls), n, share, SOURCE.get(cls, "-")])
        return out


def _classed(claims: Any) -> list[Mapping[str, Any]] | None:
    """The claims that carry a class (a hand-edited results.jsonl may hold others)."""
    if not isinstance(claims, list):
        return None
    return [c for c in claims if isinstance(c, Mapping) and isinstance(c.get("class"), str)]


HEADER = ["claims of", "class", "meaning", "n", "share", "comes from"]
NOTE = ("Every claim of the run's samples, pooled (a sample's scores are its own shares): the "
        "retriever loses the ground-truth claims no context holds; the generator leaves out "
        "what was retrieved, copies wrong claims from relevant or irrelevant contexts (noise) "
        "and states wrong claims no context holds (hallucination).")


def _bar_svg(label: str, counts: Mapping[str, int], y: int, width: int) -> list[str]:
    total = sum(counts.values())
    parts = [f'<text x="0" y="{y + 15}" font-size="12">{esc(label)} ({total})</text>']
    x = 130.0
    for cls, n in counts.items():
        if not n:
            continue
        w = n / total * width
        parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="22" '
                     f'fill="{COLOURS.get(cls, "#999")}"><title>{esc(cls)}: {n} '
                     f"({n / total:.0%})</title></rect>")
        if w > 40:
            parts.append(f'<text x="{x + 3:.1f}" y="{y + 15}" font-size="10" fill="#fff">'
                         f"{esc(cls)}</text>")
        x += w
    return parts


def chart_svg(d: RunDiagnosis) -> str:
    """The two stacked bars: ground-truth claims and answer claims by class."""
    width = 560
    parts = [f'<svg class="chart diagnosis" xmlns="http://www.w3.org/2000/svg" '
             f'viewBox="0 0 {width + 140} 64" width="{width + 140}" height="64" role="img" '
             'aria-label="claims by class">']
    if sum(d.truth.values()):
        parts += _bar_svg("ground truth", d.truth, 4, width)
    if sum(d.answer.values()):
        parts += _bar_svg("answer", d.answer, 36, width)
    parts.append("</svg>")
    return "".join(parts)


def _claim_rows(d: RunDiagnosis) -> list[list[Any]]:
    return [[s.id, s.line, c.get("statement", ""), c["class"],
             ", ".join(map(str, c.get("contexts") or ())) or "-"]
            for s in d.samples for c in s.claims]


CLAIM_HEADER = ["id", "line", "answer claim", "class", "contexts"]


NONE = ("No sample of this run has classed claims: the diagnosis metrics skipped, failed or "
        "left unscored every one (the reasons are in the tables above and in results.jsonl).")


def left_out_line(d: RunDiagnosis) -> str | None:
    """How many samples count no claim, and why (None when none)."""
    n = sum(d.left_out.values())
    if not n:
        return None
    why = "; ".join(f"{reason} ({k})" for reason, k in sorted(d.left_out.items()))
    return f"{n} sample{'s' if n > 1 else ''} left out (no claim counted): {why}."


def html(d: RunDiagnosis) -> str:
    left = f"<p>{esc(line)}</p>" if (line := left_out_line(d)) else ""
    if not d.n_samples:
        return f"<h2>Diagnosis</h2><p>{esc(NONE)}</p>{left}"
    more = f"<p>... and {d.more} more samples (see results.jsonl)</p>" if d.more else ""
    return (f"<h2>Diagnosis</h2><p>{esc(NOTE)}</p>{left}{chart_svg(d)}"
            + html_table(HEADER, d.rows(), numeric=[3, 4])
            + ("<h3>Answer claims not plainly supported</h3>"
               + html_table(CLAIM_HEADER, _claim_rows(d), numeric=[1]) + more
               if d.samples else ""))


def markdown(d: RunDiagnosis) -> list[str]:
    left = [md_cell(line), ""] if (line := left_out_line(d)) else []
    if not d.n_samples:
        return ["## Diagnosis", "", NONE, "", *left]
    out = ["## Diagnosis", "", md_cell(NOTE), "", *left, md_table(HEADER, d.rows()), ""]
    if d.samples:
        out += ["### Answer claims not plainly supported", "",
                md_table(CLAIM_HEADER, _claim_rows(d)), ""]
        if d.more:
            out += [f"... and {d.more} more samples (see results.jsonl)", ""]
    return out
