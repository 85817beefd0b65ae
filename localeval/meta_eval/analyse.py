"""From the run folder's records to agreement figures: per pair outcome, per language and
overall pairwise accuracy (ties ½) with a bootstrap CI, AUROC / Spearman / Kendall for labelled
rows (with Cohen's kappa, raw agreement and the base rate of the judge's score cut at
KAPPA_CUT against the label), and the disagreements (what the report explains)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field

from localeval.meta_eval import stats
from localeval.meta_eval.formats import LabelledRow, Pair
from localeval.results import SampleRecord

ALL = "all"
KAPPA_CUT = 0.5
"""A labelled row's score counts as the judge saying 1 when it is at least this."""
TIE_RULE = (
    "pairwise accuracy = (wins + ½ ties) / pairs judged; a tie (equal scores) counts ½; a pair "
    "where either side got no score (unscored, error, skipped) counts as a loss; pairs people "
    "marked 'tie' carry no preference and are counted, not judged"
)


class PairResult(BaseModel):
    pair_id: str
    line: int
    language: str
    preferred: Literal["a", "b"]
    score_a: float | None = None
    score_b: float | None = None
    outcome: float | None = Field(None, description="1 win, 0.5 tie, 0 loss; None: not done")
    unscored: str | None = Field(None, description="why a side has no score")
    meta: dict[str, Any] | None = None


class PairStats(BaseModel):
    pairs: int
    pairwise_accuracy: float | None
    ci95: tuple[float, float] | None
    wins: int
    ties: int
    losses: int
    unscored: int


class RowResult(BaseModel):
    id: str
    line: int
    language: str
    label: int | None = None
    human_score: float | None = None
    score: float | None = None
    done: bool = False
    unscored: str | None = None
    discordance: float | None = Field(
        None, description="share of comparable rows the judge orders the wrong way (ties ½)"
    )


class RowStats(BaseModel):
    rows: int
    scored: int
    unscored: int
    positives: int = 0
    negatives: int = 0
    auroc: float | None = None
    auroc_ci95: tuple[float, float] | None = None
    base_rate: float | None = Field(None, description="share of scored labelled rows labelled 1")
    judge_rate: float | None = Field(None, description="share the judge scores ≥ kappa_cut")
    agreement: float | None = Field(
        None, description="share where (score ≥ kappa_cut) equals the label"
    )
    kappa: float | None = Field(None, description="Cohen's kappa of the same 0/1 decisions")
    kappa_cut: float = KAPPA_CUT
    graded: int = 0
    spearman: float | None = None
    spearman_ci95: tuple[float, float] | None = None
    kendall_tau_b: float | None = None


def _score(record: SampleRecord | None, key: str, owner: str) -> tuple[float | None, str | None]:
    """(score, why there is none) of one record."""
    if record is None:
        return None, "not judged yet"
    value = record.scores.get(key)
    if value is not None:
        return float(value), None
    if owner in record.errors:
        return None, f"error: {record.errors[owner]}"
    if owner in record.skipped:
        return None, f"skipped: {record.skipped[owner]}"
    detail = record.details.get(owner) or {}
    reason = detail.get("unscored_reason") if isinstance(detail, Mapping) else None
    if key not in record.scores:
        return None, f"no score {key!r} in this row's results"
    return None, f"unscored: {reason or 'no reason given'}"


def pair_results(
    pairs: Iterable[Pair], records: Mapping[str, SampleRecord], key: str, owner: str
) -> list[PairResult]:
    out = []
    for p in pairs:
        rec_a, rec_b = records.get(p.row_id("a")), records.get(p.row_id("b"))
        language = p.language or (rec_a.language if rec_a else "") or "?"
        res = PairResult(
            pair_id=p.pair_id, line=p.line, language=language, preferred=p.preferred, meta=p.meta
        )  # type: ignore[arg-type]
        if rec_a is not None and rec_b is not None:
            (sa, why_a), (sb, why_b) = _score(rec_a, key, owner), _score(rec_b, key, owner)
            res.score_a, res.score_b = sa, sb
            good, bad = (sa, sb) if p.preferred == "a" else (sb, sa)
            res.outcome = stats.pair_outcome(good, bad)
            whys = [f"{s}: {w}" for s, w in (("a", why_a), ("b", why_b)) if w]
            res.unscored = "; ".join(whys) or None
        out.append(res)
    return out


def pair_stats(results: list[PairResult]) -> PairStats:
    done = [r for r in results if r.outcome is not None]
    outcomes = [float(r.outcome) for r in done]  # type: ignore[arg-type]
    return PairStats(
        pairs=len(done),
        pairwise_accuracy=stats.mean(outcomes),
        ci95=stats.bootstrap_ci(stats.mean, outcomes),
        wins=sum(o == stats.WIN for o in outcomes),
        ties=sum(o == stats.TIE for o in outcomes),
        losses=sum(o == stats.LOSS for o in outcomes),
        unscored=sum(r.unscored is not None for r in done),
    )


def _discordance(scores: np.ndarray, human: np.ndarray) -> np.ndarray:
    """Per row: among rows with another human value, the share the judge orders the other way
    (an equal judge score counts ½); NaN when no row is comparable. In blocks of rows."""
    out = np.full(len(scores), np.nan)
    for start in range(0, len(scores), stats.BLOCK):
        block = slice(start, start + stats.BLOCK)
        dh = np.sign(human[block, None] - human[None, :])
        ds = np.sign(scores[block, None] - scores[None, :])
        comparable = dh != 0
        wrong = np.where(ds == 0, 0.5, (ds != dh).astype(np.float64))
        counts = comparable.sum(axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            out[block] = np.where(counts > 0, (wrong * comparable).sum(axis=1) / counts, np.nan)
    return out


def row_results(
    rows: Iterable[LabelledRow], records: Mapping[str, SampleRecord], key: str, owner: str
) -> list[RowResult]:
    out = []
    for r in rows:
        rec = records.get(r.id)
        score, why = _score(rec, key, owner)
        out.append(
            RowResult(
                id=r.id,
                line=r.line,
                language=r.language or (rec.language if rec else "") or "?",
                label=r.label,
                human_score=r.human_score,
                score=score,
                done=rec is not None,
                unscored=why if rec is not None else None,
            )
        )
    for field in ("label", "human_score"):
        scored = [r for r in out if r.score is not None and getattr(r, field) is not None]
        if len(scored) > 1:
            disc = _discordance(
                np.asarray([r.score for r in scored], dtype=np.float64),
                np.asarray([getattr(r, field) for r in scored], dtype=np.float64),
            )
            for r, d in zip(scored, disc, strict=True):
                if not np.isnan(d):
                    r.discordance = max(r.discordance or 0.0, float(d))
    return out


def row_stats(results: list[RowResult]) -> RowStats:
    done = [r for r in results if r.done]
    scored = [r for r in done if r.score is not None]
    binary = [r for r in scored if r.label is not None]
    graded = [r for r in scored if r.human_score is not None]
    out = RowStats(
        rows=len(done),
        scored=len(scored),
        unscored=len(done) - len(scored),
        positives=sum(r.label == 1 for r in binary),
        negatives=sum(r.label == 0 for r in binary),
        graded=len(graded),
    )
    if binary:
        s, y = [r.score for r in binary], [r.label for r in binary]
        out.auroc = stats.auroc(s, y)  # type: ignore[arg-type]
        if out.auroc is not None:
            out.auroc_ci95 = stats.bootstrap_ci(stats.auroc, s, y)  # type: ignore[arg-type]
        said = [int(v >= KAPPA_CUT) for v in s]  # type: ignore[operator]
        out.base_rate, out.judge_rate = float(np.mean(y)), float(np.mean(said))
        out.agreement = float(np.mean([j == h for j, h in zip(said, y, strict=True)]))
        out.kappa = stats.cohen_kappa(said, y)  # type: ignore[arg-type]
    if graded:
        s, h = [r.score for r in graded], [r.human_score for r in graded]
        out.spearman = stats.spearman(s, h)  # type: ignore[arg-type]
        if out.spearman is not None:
            out.spearman_ci95 = stats.bootstrap_ci(stats.spearman, s, h)  # type: ignore[arg-type]
        out.kendall_tau_b = stats.kendall_tau_b(s, h)  # type: ignore[arg-type]
    return out


def by_group(results: list[Any], fn: Any) -> dict[str, Any]:
    """`fn` over all results, then over each language (sorted)."""
    groups = {ALL: fn(results)}
    for lang in sorted({r.language for r in results}):
        groups[lang] = fn([r for r in results if r.language == lang])
    return groups


def pair_disagreements(results: list[PairResult]) -> list[PairResult]:
    """Pairs the judge lost or tied, losses first, in input order."""
    wrong = [r for r in results if r.outcome is not None and r.outcome < stats.WIN]
    return sorted(wrong, key=lambda r: (r.outcome, r.line))


def row_disagreements(results: list[RowResult]) -> list[RowResult]:
    """Rows the judge orders the wrong way against at least half of the comparable rows (worst
    first), then rows with no score."""
    wrong = [r for r in results if r.discordance is not None and r.discordance >= 0.5]
    missing = [r for r in results if r.done and r.score is None]
    return sorted(wrong, key=lambda r: (-(r.discordance or 0.0), r.line)) + missing
