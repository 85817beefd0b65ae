"""Compare two run folders: per score, the mean difference (B − A) on the samples both runs
scored, its paired bootstrap 95% interval (pairs resampled together) and whether the interval
excludes 0, plus the samples that moved most. Samples are paired by id; a default id
(`row-<line>`) of a row without a question names no sample, and is never paired. `write` puts
compare.md / .html / .json into a folder only where none of them is another tool's."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from localeval.errors import OutputError, UsageError
from localeval.names import headline_twins, owner_of, same_note
from localeval.report.html import forest_svg
from localeval.report.kit import esc, fmt, fmt_ci, html_table, md_cell, md_table, page
from localeval.results.folder import RunFolder, load_run
from localeval.results.runfiles import read_json, write_text
from localeval.results.tally import bootstrap_ci

TOP = 5
WRITTEN_BY = "localeval compare"  # compare.json's mark: the folder's compare files are ours
FILES = ("compare.md", "compare.html", "compare.json")


@dataclass
class Mover:
    id: str
    a: float
    b: float
    delta: float
    question: str | None = None


FEW_PAIRS = 10
"""Below this many paired samples a percentile bootstrap interval is too narrow to call a change
(3 pairs that all drop exclude 0 at any spread): the verdict says so."""


@dataclass
class ScoreDiff:
    key: str
    n: int  # samples scored in both runs
    mean_a: float | None
    mean_b: float | None
    diff: float | None  # mean of (b - a) over the paired samples
    ci95: list[float] | None
    only_a: int = 0  # scored in A only
    only_b: int = 0
    movers: list[Mover] = field(default_factory=list)
    higher_is_better: bool = True  # the metric's declared direction (`@metric`)

    @property
    def excludes_zero(self) -> bool:
        return bool(self.ci95) and (self.ci95[0] > 0 or self.ci95[1] < 0)

    @property
    def small(self) -> bool:
        """Fewer pairs than a bootstrap interval can be trusted on (it comes out too narrow)."""
        return 0 < self.n < FEW_PAIRS

    @property
    def verdict(self) -> str:
        if self.diff is None:
            return "no paired samples"
        if not self.ci95:
            return "too few samples"
        if not self.excludes_zero:
            return "no clear change"
        side = "better" if (self.diff > 0) == self.higher_is_better else "worse"
        return f"{side}? (only {self.n} pairs: too few to be sure)" if self.small else side


@dataclass
class Comparison:
    a: RunFolder
    b: RunFolder
    rows: list[ScoreDiff]
    differences: list[str]  # settings/models/prompts that differ between the runs
    other_questions: list[str] = field(default_factory=list)  # paired ids, different questions
    default_ids: list[str] = field(default_factory=list)  # row-<line> ids, no question: unpaired
    corrected: list[dict[str, Any]] = field(default_factory=list)  # labels/compare.py, B − A

    @property
    def twins(self) -> list[str]:
        """The `.weighted` / `.greedy` rows that read exactly as their headline's row (the same
        pairs, means and difference): the tables and the chart leave them out, compare.json
        keeps them."""
        by_key = {r.key: r for r in self.rows}
        same = ("n", "mean_a", "mean_b", "diff", "ci95", "only_a", "only_b")
        return headline_twins(by_key, lambda key, head: all(
            getattr(by_key[key], f) == getattr(by_key[head], f) for f in same))

    @property
    def shown(self) -> list[ScoreDiff]:
        """The rows the tables and the chart show: all but the twins."""
        hidden = set(self.twins)
        return [r for r in self.rows if r.key not in hidden]

    def to_json(self) -> dict[str, Any]:
        return {
            **({"corrected": self.corrected} if self.corrected else {}),
            "written_by": WRITTEN_BY,
            "a": str(self.a.path),
            "b": str(self.b.path),
            "differences": self.differences,
            "ids_with_other_questions": self.other_questions,
            "default_ids_not_paired": self.default_ids,
            "scores": [
                asdict(r) | {"excludes_zero": r.excludes_zero, "verdict": r.verdict,
                             "few_pairs": r.small}
                for r in self.rows
            ],
        }


def compare_runs(a_dir: Path, b_dir: Path, *, top: int = TOP,
                 allow_different: bool = False) -> Comparison:
    """Pair the runs' samples by id. Samples are paired only when they ask the same question:
    ids that hold another question in B (two runs of unrelated datasets) are refused with a
    UsageError, or with `allow_different` left unpaired and listed."""
    a, b = load_run(Path(a_dir)), load_run(Path(b_dir))
    other = _other_questions(a, b)
    if other and not allow_different:
        first = other[0]
        raise UsageError(
            f"{a.path} and {b.path} are runs of different datasets: {len(other)} id(s) hold "
            f"another question in B (e.g. id {first!r}); compare two runs of one dataset, or "
            "pass --allow-different-datasets to compare the rest"
        )
    keys = list(a.summary["metrics"]) + [
        k for k in b.summary["metrics"] if k not in a.summary["metrics"]
    ]
    default_ids = _default_ids(a, b)
    skip = set(other) | set(default_ids)
    rec_a = {r.id: r for r in a.records if r.id not in skip}
    rec_b = {r.id: r for r in b.records if r.id not in skip}
    rows = []
    for key in keys:
        sa = {i: r.scores[key] for i, r in rec_a.items() if r.scores.get(key) is not None}
        sb = {i: r.scores[key] for i, r in rec_b.items() if r.scores.get(key) is not None}
        paired = [i for i in rec_a if i in sa and i in sb]
        diffs = [float(sb[i]) - float(sa[i]) for i in paired]  # type: ignore[arg-type]
        n = len(paired)
        movers = sorted(
            (
                Mover(
                    id=i,
                    a=float(sa[i]),
                    b=float(sb[i]),  # type: ignore[arg-type]
                    delta=float(sb[i]) - float(sa[i]),  # type: ignore[arg-type]
                    question=rec_b[i].question or rec_a[i].question,
                )
                for i in paired
                if sb[i] != sa[i]
            ),
            key=lambda m: (-abs(m.delta), m.id),
        )
        ci = bootstrap_ci(diffs)
        rows.append(
            ScoreDiff(
                key=key,
                n=n,
                mean_a=sum(float(sa[i]) for i in paired) / n if n else None,  # type: ignore[arg-type]
                mean_b=sum(float(sb[i]) for i in paired) / n if n else None,  # type: ignore[arg-type]
                diff=sum(diffs) / n if n else None,
                ci95=list(ci) if ci else None,
                only_a=len(set(sa) - set(sb)),
                only_b=len(set(sb) - set(sa)),
                movers=movers[:top],
                higher_is_better=higher_is_better(key, b.summary, a.summary),
            )
        )
    return Comparison(a=a, b=b, rows=rows, differences=_differences(a.summary, b.summary),
                      other_questions=other, default_ids=default_ids)


def _default_ids(a: RunFolder, b: RunFolder) -> list[str]:
    """Ids both runs hold that are only a row's default id (`row-<line>`, a row without an id)
    on a row without a question: nothing says the two rows are one sample."""
    bare_a = {r.id for r in a.records if not r.question and r.id == f"row-{r.line}"}
    return [r.id for r in b.records
            if r.id in bare_a and not r.question and r.id == f"row-{r.line}"]


def higher_is_better(key: str, *summaries: Mapping[str, Any]) -> bool:
    """The direction of a score key (`metric`, `metric.sub`, `metric@k`) as its metric declares
    it, a rubric's as the runs' settings hold it (`summaries`); a metric this version does not
    know (an older run's) counts higher as better."""
    from localeval.metrics import REGISTRY

    m = REGISTRY.get(owner_of(key))
    if m is not None:
        return m.higher_is_better
    for summary in summaries:
        for r in (summary.get("settings") or {}).get("rubrics") or []:
            if isinstance(r, Mapping) and r.get("name") == owner_of(key):
                return bool(r.get("higher_is_better", True))
    return True


def _other_questions(a: RunFolder, b: RunFolder) -> list[str]:
    """Ids of both runs whose questions differ (after trimming spaces); rows without a question
    (retrieval-only) cannot be told apart this way."""
    qa = {r.id: r.question.strip() for r in a.records if r.question}
    return [r.id for r in b.records
            if r.question and r.id in qa and qa[r.id] != r.question.strip()]


def _differences(sa: dict[str, Any], sb: dict[str, Any]) -> list[str]:
    out = []
    for section in ("settings", "prompts"):
        x, y = sa.get(section) or {}, sb.get(section) or {}
        for k in sorted(set(x) | set(y)):
            if x.get(k) != y.get(k):
                out.append(f"{section} {k}: {_short(x.get(k))} → {_short(y.get(k))}")
    ma, mb = sa.get("models") or {}, sb.get("models") or {}
    for role in sorted(set(ma) | set(mb)):
        x, y = ma.get(role), mb.get(role)
        if isinstance(x, dict) or isinstance(y, dict):
            nx = (x or {}).get("name"), (x or {}).get("sha256")
            ny = (y or {}).get("name"), (y or {}).get("sha256")
            if nx != ny:
                out.append(
                    f"{role} model: {nx[0]} ({str(nx[1])[:12]}) → {ny[0]} ({str(ny[1])[:12]})"
                )
    return out


def _short(v: Any) -> str:
    text = json.dumps(v, ensure_ascii=False, default=str)
    return text if len(text) <= 50 else text[:47] + "..."


HEADER = [
    "score",
    "n paired",
    "mean A",
    "mean B",
    "B − A",
    "95% CI (paired bootstrap)",
    "excludes 0",
    "verdict",
]


def _rows(c: Comparison) -> list[list[Any]]:
    return [
        [
            r.key,
            r.n,
            fmt(r.mean_a),
            fmt(r.mean_b),
            "-" if r.diff is None else f"{r.diff:+.3f}",
            fmt_ci(r.ci95),
            "yes" if r.excludes_zero else "no",
            r.verdict,
        ]
        for r in c.shown
    ]


CORRECTED_HEADER = ["score", "labels / rows", "judge B − A", "corrected B − A", "95% CI",
                    "labels only B − A", "95% CI (labels)", "excludes 0"]
CORRECTED_NOTE = ("B − A from the judge's scores on every paired sample plus human labels of "
                  "both runs' answers on the same uniform random samples (prediction-powered "
                  "inference on the paired differences, 95 % interval).")


def _corrected_rows(c: Comparison) -> list[list[Any]]:
    return [[d["key"], f"{d['n_labels']} / {d['n_rows']}", f"{d['judge_diff']:+.3f}",
             f"{d['diff']:+.3f}", fmt_ci(d["ci"]), f"{d['labels_only_diff']:+.3f}",
             fmt_ci(d["labels_only_ci"]), "yes" if d["excludes_zero"] else "no"]
            for d in c.corrected]


MOVER_HEADER = ["id", "A", "B", "B − A", "question"]


def _mover_rows(r: ScoreDiff, question_chars: int) -> list[list[Any]]:
    return [[m.id, fmt(m.a), fmt(m.b), f"{m.delta:+.3f}", (m.question or "")[:question_chars]]
            for m in r.movers]


def _twins_note(c: Comparison) -> str:
    return same_note(c.twins, "compare.json has them")


def to_markdown(c: Comparison) -> str:
    out = [
        f"# localeval compare: {c.a.path} (A) vs {c.b.path} (B)",
        "",
        "Per score: mean over the samples both runs scored (paired by id), the mean difference "
        "B − A and its paired bootstrap 95% interval (2,000 resamples of the pairs).",
        "",
        md_table(HEADER, _rows(c)),
        "",
    ]
    if c.twins:
        out += [_twins_note(c), ""]
    unpaired = [
        f"{r.key}: {r.only_a} only in A, {r.only_b} only in B"
        for r in c.shown
        if r.only_a or r.only_b
    ]
    if unpaired:
        out += ["Not paired (scored in one run only): " + "; ".join(unpaired), ""]
    if c.corrected:
        out += ["## Corrected by human labels", "", CORRECTED_NOTE, "",
                md_table(CORRECTED_HEADER, _corrected_rows(c)), ""]
    if c.other_questions:
        out += [f"**Warning:** {len(c.other_questions)} id(s) hold another question in B "
                "(runs of different datasets); they are left out: "
                + ", ".join(md_cell(i) for i in c.other_questions[:20]), ""]
    if c.differences:
        out += (
            ["## What differs between the runs", ""]
            + [f"- {md_cell(d)}" for d in c.differences]
            + [""]
        )
    moved = [r for r in c.shown if r.movers]
    if moved:
        out += ["## Samples that moved most", ""]
        for r in moved:
            out += [
                f"### {r.key}",
                "",
                md_table(MOVER_HEADER, _mover_rows(r, 120)),
                "",
            ]
    return "\n".join(out).rstrip() + "\n"


def to_html(c: Comparison) -> str:
    body = [
        f"<h1>localeval compare</h1><p>A: <code>{esc(c.a.path)}</code><br>"
        f"B: <code>{esc(c.b.path)}</code></p>",
        "<h2>Differences B − A</h2><p>Mean difference on the samples both runs scored (paired "
        "by id) with its paired bootstrap 95% interval; an interval that excludes 0 is a "
        "clear change.</p>",
    ]
    rows = [(r.key, r.diff, r.ci95) for r in c.shown if r.diff is not None]
    if rows:
        span = max([0.05] + [abs(v) for _, d, ci in rows for v in ([d] + (ci or []))])
        span = min(1.0, round(span * 1.2 + 0.005, 2))
        body.append(forest_svg(rows, lo=-span, hi=span, zero=0.0, css_class="forest diff"))
    body.append(html_table(HEADER, _rows(c), numeric=range(1, 6)))
    if c.twins:
        body.append(f"<p>{esc(_twins_note(c))}</p>")
    if c.corrected:
        body.append(f"<h2>Corrected by human labels</h2><p>{esc(CORRECTED_NOTE)}</p>"
                    + html_table(CORRECTED_HEADER, _corrected_rows(c), numeric=range(1, 7)))
    unpaired = [[r.key, r.only_a, r.only_b] for r in c.shown if r.only_a or r.only_b]
    if unpaired:
        body.append(
            "<h3>Scored in one run only</h3>"
            + html_table(["score", "only A", "only B"], unpaired, numeric=(1, 2))
        )
    if c.differences:
        body.append(
            "<h2>What differs between the runs</h2><ul>"
            + "".join(f"<li><code>{esc(d)}</code></li>" for d in c.differences)
            + "</ul>"
        )
    moved = [r for r in c.shown if r.movers]
    if moved:
        body.append("<h2>Samples that moved most</h2>")
        for r in moved:
            body.append(
                f"<h3>{esc(r.key)}</h3>"
                + html_table(MOVER_HEADER, _mover_rows(r, 200), numeric=(1, 2, 3))
            )
    return page("localeval compare", "".join(body))


def write(c: Comparison, out_dir: Path) -> list[Path]:
    """compare.md, compare.html and compare.json, each written atomically and never through a
    symbolic link (runfiles.write_text); compare.json is strict JSON (no NaN)."""
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot create {out_dir}: {exc.strerror or exc}") from None
    _refuse_foreign(out_dir)
    md, html_path = out_dir / "compare.md", out_dir / "compare.html"
    write_text(md, to_markdown(c))
    write_text(html_path, to_html(c))
    write_text(out_dir / "compare.json",
               json.dumps(c.to_json(), indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    return [md, html_path]


def _refuse_foreign(out_dir: Path) -> None:
    """Refuse a folder whose compare files another tool wrote (compare.json without our mark,
    or compare.md / .html without our compare.json): they are left alone."""
    own = read_json(out_dir / "compare.json")
    ours = isinstance(own, dict) and (own.get("written_by") == WRITTEN_BY
                                      or {"a", "b", "differences", "scores"} <= set(own))
    for name in FILES:
        path = out_dir / name
        if (path.exists() or path.is_symlink()) and not ours:
            raise UsageError(f"{path} was not written by localeval compare and is left alone; "
                             "choose another --out")
