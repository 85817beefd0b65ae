"""τ for any judge, fitted from human claim labels: `localeval calibrate RUN_DIR --out FILE`,
used by `localeval run --calibration FILE`.

τ is the P(supported) a claim needs (metrics/claims/verdicts.py). The shipped τ was fitted for
the 1.5B judge; a judge with no learned head (a user's own GGUF) gets its own here: the grid
value (0.05 … 0.95) whose verdicts P ≥ τ best agree with the labels (claims' balanced accuracy,
answers' AUROC) less how far the labelled answers' mean score is from their mean label
(`objective`; ties: nearest the τ it replaces), written only when, out of fold, it is no worse
than the τ it replaces on either: agreement, and distance of the mean (`out_of_fold`,
`worse_than_replaced`). Claims come from the labels
file in any order (random and informative): each claim label is one (P, label) point; a
sample-level label of 1 marks every claim of that sample supported, a 0 marks its claim
unsupported only when it has one claim (a sample-level 0 says some claim is wrong, not which).
Claims a rule settled (a quote, a check) and claims without a P are left out: τ does not decide
them.

The calibration file records the judge's sha256 and the run's template hashes; `run` refuses it
in one line when it holds what `calibrate` never writes (τ off the grid's range, no label), for
another judge, when it does not cover a template of the run's τ-decided metrics, or when a
template it shares with the run has changed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from localeval.errors import ConfigError, LabelsError, first_error
from localeval.labels.estimate import read_run_labels
from localeval.labels.store import now
from localeval.results.records import RESULTS_FILE, SampleRecord, read_results
from localeval.results.runfiles import SUMMARY_FILE, read_json

FORMAT = "localeval-calibration/1"
GRID = [round(0.05 + 0.01 * i, 2) for i in range(91)]
ROUGH = 50
"""Fewer claim labels than this: the fitted τ is said to be rough."""


class JudgeRef(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    sha256: str = Field(min_length=1)


class Calibration(BaseModel):
    """What a calibration file holds."""

    model_config = ConfigDict(extra="forbid")

    format: Literal["localeval-calibration/1"] = FORMAT
    judge: JudgeRef
    prompts: dict[str, str] = Field(description="template → sha256 of the labelled run")
    tau: float = Field(ge=0.0, le=1.0)
    n_claims: int = Field(ge=0, description="claim labels fitted on")
    n_supported: int = Field(ge=0)
    n_answers: int = Field(0, ge=0, description="labelled answers fitted on")
    n_right: int = Field(0, ge=0)
    agreement: float = Field(description="the agreement at τ, on the labels fitted on")
    mean_gap: float | None = Field(None, description="|mean score − mean label| at τ, on the "
                                                     "labels fitted on (`mean_gap`)")
    default_agreement: float | None = Field(None, description="the shipped τ's, same labels")
    balanced_accuracy: float | None = Field(None, description="claims: P ≥ τ against labels")
    answer_auroc: float | None = Field(None, description="answers: right above wrong at τ")
    default_tau: dict[str, float] = Field(description="the shipped τ per language")
    fitted: str = Field(description="how τ was fitted")
    replaces: dict[str, Any] | None = Field(
        None, description="the τ this calibration replaces: `tau` (one, or per language) and "
                          "`source` (the labelled run's τ, or the calibration file it replaced)")
    out_of_fold: dict[str, Any] | None = Field(
        None, description="k-fold figures on the labels: `fitted` (agreement of τ fitted on the "
                          "other folds, judged on each fold), `replaced` (the replaced τ's), "
                          "`folds`, and `mean`: the labels' mean (`labels`), the held-out mean "
                          "score at the fitted τ and at the replaced one, and their gaps")
    answers_mean: dict[str, Any] | None = Field(
        None, description="the labelled answers' mean label, and their mean score at the "
                          "replaced τ (`replaced`) and at τ (`fitted`)")
    run: str | None = Field(None, description="the labelled run's fingerprint")
    labels: str = ""
    created: str = ""


def _cut(tau: float | dict[str, float], language: str) -> float:
    return tau if isinstance(tau, float) else tau.get(language, tau.get("en", 0.5))


def balanced_accuracy(points: list[tuple[float, int, str]], tau: float | dict[str, float]
                      ) -> float | None:
    """Mean of the shares of supported claims with P ≥ τ and unsupported ones with P < τ; None
    without both kinds of claim."""
    return _balanced([(p >= _cut(tau, g), y) for p, y, g in points])


def _balanced(decided: list[tuple[bool, int]]) -> float | None:
    """Balanced accuracy of (P ≥ τ, label) pairs; None without both kinds of label."""
    pos = [d for d, y in decided if y == 1]
    neg = [not d for d, y in decided if y == 0]
    return 0.5 * (sum(pos) / len(pos) + sum(neg) / len(neg)) if pos and neg else None


def score_at(entries: list[dict[str, Any]], tau: float | dict[str, float], language: str
             ) -> float | None:
    """A claim metric's score of one answer with τ: a judged claim counts when P ≥ τ, one a rule
    settled as it was settled; None without claims."""
    if not entries:
        return None
    votes = [float(e["p_supported"]) >= _cut(tau, language) if _judged(e) is not None
             else bool(e.get("verdict")) for e in entries]
    return sum(votes) / len(votes)


def answer_agreement(samples: list[tuple[list[dict[str, Any]], float, str]],
                     tau: float | dict[str, float]) -> float | None:
    """How often a right answer scores above a wrong one at τ, over every (right, wrong) pair of
    labelled answers (AUROC; ties ½); None without both kinds of answer."""
    return _auroc([(score_at(e, tau, g), y) for e, y, g in samples])


def _auroc(scored: list[tuple[float | None, float]]) -> float | None:
    """How often a right answer's score (label 1) is above a wrong one's (label below 1; ties
    ½); None without both."""
    pos = [s for s, y in scored if s is not None and y == 1]
    neg = [s for s, y in scored if s is not None and y < 1]
    if not pos or not neg:
        return None
    return sum((a > b) + 0.5 * (a == b) for a in pos for b in neg) / (len(pos) * len(neg))


def agreement(points: list[tuple[float, int, str]],
              samples: list[tuple[list[dict[str, Any]], float, str]],
              tau: float | dict[str, float]) -> float | None:
    """The mean of the criteria the labels allow: claims' balanced accuracy, answers' AUROC."""
    found = [x for x in (balanced_accuracy(points, tau), answer_agreement(samples, tau))
             if x is not None]
    return sum(found) / len(found) if found else None


def mean_gap(points: list[tuple[float, int, str]],
             samples: list[tuple[list[dict[str, Any]], float, str]],
             tau: float | dict[str, float]) -> float | None:
    """How far the number a run reports is from the labels at τ: |mean score − mean label| of
    the labelled answers (scored as the run scores them); without labelled answers, of the
    claims: |share with P ≥ τ − share supported|. None without labels."""
    level = _level(points, samples, lambda _: tau)
    return None if level is None else abs(level[0] - level[1])


def _level(points: list[tuple[float, int, str]],
           samples: list[tuple[list[dict[str, Any]], float, str]],
           tau_of: Callable[[int], float | dict[str, float]]) -> tuple[float, float] | None:
    """(mean score, mean label) of the labelled answers, each at `tau_of(i)` (its fold's τ);
    without answers, (share of claims P ≥ τ, share supported). None without either."""
    scored = [(x, y) for i, (e, y, g) in enumerate(samples)
              if (x := score_at(e, tau_of(i), g)) is not None]
    if scored:
        return (sum(x for x, _ in scored) / len(scored), sum(y for _, y in scored) / len(scored))
    if points:
        return (sum(p >= _cut(tau_of(i), g) for i, (p, _, g) in enumerate(points)) / len(points),
                sum(y for _, y, _ in points) / len(points))
    return None


def objective(points: list[tuple[float, int, str]],
              samples: list[tuple[list[dict[str, Any]], float, str]],
              tau: float | dict[str, float]) -> float | None:
    """What `choose_tau` maximises: `agreement` less `mean_gap` (a τ that ranks as well but
    moves the run's mean away from the labels loses). None where agreement is undefined."""
    found = agreement(points, samples, tau)
    return None if found is None else found - (mean_gap(points, samples, tau) or 0.0)


def choose_tau(points: list[tuple[float, int, str]], prefer: float = 0.5,
               samples: list[tuple[list[dict[str, Any]], float, str]] = ()  # type: ignore[assignment]
               ) -> tuple[float, float]:
    """(τ, its agreement): the grid value with the best `objective` (agreement with the labels,
    claims and answers, less the distance of the answers' mean from the labels'); ties nearest
    `prefer`. LabelsError without both supported and unsupported ones."""
    if agreement(points, list(samples), 0.5) is None:
        pos = sum(y for _, y, _ in points)
        raise LabelsError(f"τ needs supported and unsupported claims (or right and wrong "
                          f"answers) among the labels: got {pos} supported claim(s) and "
                          f"{len(points) - pos} not; label more samples")
    best = max(GRID, key=lambda t: (round(objective(points, list(samples), t), 9),
                                    -abs(t - prefer)))
    return best, agreement(points, list(samples), best)  # type: ignore[return-value]


def _entries(record: SampleRecord, metric: str) -> list[dict[str, Any]]:
    detail = record.details.get(metric)
    statements = detail.get("statements") if isinstance(detail, dict) else None
    return [s for s in statements if isinstance(s, dict)] if isinstance(statements, list) else []


def _judged(entry: dict[str, Any]) -> float | None:
    """The claim's P when τ decided it (not a rule), else None."""
    p = entry.get("p_supported")
    if entry.get("rule", "judge") != "judge" or not isinstance(p, (int, float)):
        return None
    return float(p)


Sample = tuple[list[dict[str, Any]], float, str]
"""A labelled answer: its claims' entries, its label (a sample-level label, or the mean of its
claim labels; right when 1), its language."""


@dataclass
class Unit:
    """The labels of one sample (every metric's): its claim points and labelled answers. The
    folds of `out_of_fold` keep a sample's labels together."""

    id: str
    points: list[tuple[float, int, str]] = field(default_factory=list)
    samples: list[Sample] = field(default_factory=list)

    @property
    def kind(self) -> int:
        """1 when its labels are mostly right / supported (the folds' strata)."""
        ys = [y for _, y, _ in self.samples] or [y for _, y, _ in self.points]
        return int(2 * sum(ys) >= len(ys)) if ys else 0


def labelled_units(run_dir: Path, labels_path: Path | None = None
                   ) -> tuple[list[Unit], list[str]]:
    """Per labelled sample (or conversation's turn): (P, label, language) of every labelled
    claim τ decides (module doc) and the labelled answers (a sample-level label, or labels of
    all its claims); the notes."""
    from localeval.labels.turns import turn_records

    read, _, notes = read_run_labels(run_dir, labels_path)
    records = {}
    for r in read_results(Path(run_dir) / RESULTS_FILE).records:
        records[r.id] = r
        records.update((t.id, t) for t in turn_records(r))  # a conversation's turns too
    by_sample: dict[tuple[str, str], dict[int | None, float]] = {}
    for label in read.labels.values():
        if label.label is not None and label.unit in records:
            by_sample.setdefault((label.unit, label.metric), {})[label.claim] = label.label
    units: dict[str, Unit] = {}
    for (sid, metric), marks in by_sample.items():
        record = records[sid]
        unit = units.setdefault(sid, Unit(sid))
        entries = _entries(record, metric)
        claims = {k: v for k, v in marks.items() if k is not None}
        whole = marks.get(None)
        if whole is None and entries and set(claims) >= set(range(len(entries))):
            # its share of claims supported: right (1) only if every claim is
            whole = sum(claims[i] for i in range(len(entries))) / len(entries)
        if whole is not None and entries:
            unit.samples.append((entries, float(whole), record.language or "en"))
        if not claims and None in marks:  # a sample-level label only
            judged = [e for e in entries if _judged(e) is not None]
            if marks[None] == 1:
                claims = {i: 1.0 for i, e in enumerate(entries)}
            elif marks[None] == 0 and len(entries) == 1 and judged:
                claims = {0: 0.0}
        for i, y in claims.items():
            p = _judged(entries[i]) if i < len(entries) else None
            if p is not None:
                unit.points.append((p, int(y >= 0.5), record.language or "en"))
    return [u for u in units.values() if u.points or u.samples], notes


def claim_points(run_dir: Path, labels_path: Path | None = None
                 ) -> tuple[list[tuple[float, int, str]], list[Sample], list[str]]:
    """Every labelled claim point and labelled answer of `labelled_units`, and the notes."""
    units, notes = labelled_units(run_dir, labels_path)
    return ([x for u in units for x in u.points], [x for u in units for x in u.samples],
            notes)


FOLDS = 5
"""Folds of the out-of-fold agreement (fewer when fewer samples are labelled)."""


@dataclass
class OutOfFold:
    """Fitting τ as `choose_tau` does, judged on held-out folds: the agreement (`agreement`'s
    criteria, pooled over the folds), the held-out answers' mean score at their fold's τ and
    their mean label (claims' shares without answers: `_level`), and the number of folds."""

    agreement: float | None
    mean: float | None
    labels: float | None
    folds: int

    @property
    def gap(self) -> float | None:
        return None if self.mean is None or self.labels is None else abs(self.mean - self.labels)


def out_of_fold(units: list[Unit], prefer: float, fallback: float | dict[str, float]
                ) -> OutOfFold:
    """`OutOfFold` of fitting τ on the units: each fold judged at the τ fitted on the other
    folds (folds of whole samples, stratified by their labels; a fold whose rest lacks a kind
    of label is judged at `fallback`)."""
    k = min(FOLDS, len(units))
    if k < 2:
        return OutOfFold(None, None, None, k)
    order = sorted(units, key=lambda u: (u.kind, hashlib.sha256(u.id.encode()).hexdigest()))
    folds = [order[j::k] for j in range(k)]
    decided: list[tuple[bool, int]] = []
    scored: list[tuple[float | None, float]] = []
    points: list[tuple[float, int, str]] = []
    samples: list[Sample] = []
    sample_taus: list[float | dict[str, float]] = []  # per held-out answer, its fold's τ
    point_taus: list[float | dict[str, float]] = []  # per held-out claim
    for j, held in enumerate(folds):
        rest = [u for i, f in enumerate(folds) if i != j for u in f]
        try:
            tau: float | dict[str, float] = choose_tau(
                [x for u in rest for x in u.points], prefer,
                [x for u in rest for x in u.samples])[0]
        except LabelsError:  # the other folds hold one kind of label only
            tau = fallback
        decided += [(p >= _cut(tau, g), y) for u in held for p, y, g in u.points]
        scored += [(score_at(e, tau, g), y) for u in held for e, y, g in u.samples]
        held_points = [x for u in held for x in u.points]
        held_samples = [x for u in held for x in u.samples]
        points += held_points
        samples += held_samples
        sample_taus += [tau] * len(held_samples)
        point_taus += [tau] * len(held_points)
    found = [x for x in (_balanced(decided), _auroc(scored)) if x is not None]
    taus = sample_taus if samples else point_taus
    level = _level(points, samples, lambda i: taus[i])
    return OutOfFold(sum(found) / len(found) if found else None,
                     None if level is None else level[0], None if level is None else level[1], k)


def fit_calibration(run_dir: Path, labels_path: Path | None = None,
                    replacing: Path | None = None) -> tuple[Calibration, list[str]]:
    """The calibration of the run's judge from its labels, with the τ it replaces (`replaced`:
    the calibration file `replacing` when it holds one for this judge, else the τ the labelled
    run applied) and both out of fold; and the notes (one line each)."""
    from localeval.labels.estimate import run_fingerprint
    from localeval.metrics.claims.verdicts import FITTED

    run_dir = Path(run_dir)
    summary = read_json(run_dir / SUMMARY_FILE)
    judge = (summary.get("models") or {}).get("judge") if isinstance(summary, dict) else None
    if not isinstance(judge, dict) or not judge.get("sha256"):
        raise LabelsError(f"{run_dir}/{SUMMARY_FILE} does not name the judge's sha256 (a run "
                          "stopped before its summary); finish it with `localeval run --resume`")
    units, notes = labelled_units(run_dir, labels_path)
    points = [x for u in units for x in u.points]
    samples = [x for u in units for x in u.samples]
    if not points and not samples:
        raise LabelsError(f"no labelled claim or answer of {run_dir} is decided by τ (label "
                          "samples or claims of a claim metric such as faithfulness)")
    old_tau, source = replaced_tau(summary, str(judge["sha256"]), replacing)
    langs = [g for *_, g in points] + [g for *_, g in samples]
    prefer = sum(_cut(old_tau, g) for g in langs) / len(langs)  # ties: nearest the old τ
    tau, reached = choose_tau(points, prefer, samples)
    if len(samples) + len(points) < ROUGH:
        notes.append(f"τ was fitted on {len(samples)} labelled answers and {len(points)} claim "
                     f"labels: it is rough below {ROUGH}; label more samples to firm it up")
    oof = out_of_fold(units, prefer, old_tau)
    before = _level(points, samples, lambda _: old_tau)  # the replaced τ: on all the labels

    def rounded(x: float | None) -> float | None:
        return None if x is None else round(x, 4)

    def mean_score(t: float | dict[str, float]) -> float | None:
        found = [x for e, _, g in samples if (x := score_at(e, t, g)) is not None]
        return rounded(sum(found) / len(found)) if found else None

    labels = Path(labels_path) if labels_path is not None else run_dir / "labels.jsonl"
    what = "labelled answers' mean score" if samples else "claims' share with P ≥ τ"
    cal = Calibration(
        judge=JudgeRef(name=str(judge.get("name") or "?"), sha256=str(judge["sha256"])),
        prompts=dict((summary or {}).get("prompts") or {}),
        tau=tau, n_claims=len(points), n_supported=sum(y for _, y, _ in points),
        n_answers=len(samples), n_right=sum(y == 1 for _, y, _ in samples),
        agreement=round(reached, 4), mean_gap=rounded(mean_gap(points, samples, tau)),
        default_agreement=rounded(agreement(points, samples, dict(FITTED))),
        balanced_accuracy=rounded(balanced_accuracy(points, tau)),
        answer_auroc=rounded(answer_agreement(samples, tau)), default_tau=dict(FITTED),
        fitted=f"grid {GRID[0]}…{GRID[-1]} by {GRID[1] - GRID[0]:.2f}: the τ whose verdicts "
               f"P(supported) ≥ τ best agree with the labels — the mean of the claims' balanced "
               f"accuracy ({len(points)} claim labels) and the answers' AUROC ({len(samples)} "
               "labelled answers), where each has both kinds — less the distance of the "
               f"{what} from the labels' mean; ties nearest the τ it replaces",
        replaces={"tau": old_tau, "source": source},
        out_of_fold={"folds": oof.folds, "fitted": rounded(oof.agreement),
                     "replaced": rounded(agreement(points, samples, old_tau)),
                     "mean": {"of": what, "labels": rounded(oof.labels),
                              "fitted": rounded(oof.mean),
                              "replaced": rounded(before[0]) if before else None,
                              "gap_fitted": rounded(oof.gap),
                              "gap_replaced": rounded(abs(before[0] - before[1]))
                              if before else None}},
        answers_mean=None if not samples else {
            "labels": round(sum(y for _, y, _ in samples) / len(samples), 4),
            "replaced": mean_score(old_tau), "fitted": mean_score(tau)},
        run=run_fingerprint(run_dir), labels=str(labels), created=now())
    return cal, notes


def replaced_tau(summary: Any, judge: str, replacing: Path | None
                 ) -> tuple[float | dict[str, float], str]:
    """The τ a new calibration replaces and where it comes from: the calibration file
    `replacing` when it is one for this judge, else the τ the labelled run applied
    (summary.json's `support_threshold`), else the shipped τ."""
    from localeval.metrics.claims.verdicts import FITTED

    if replacing is not None and Path(replacing).is_file():
        try:
            old = load_calibration(Path(replacing))
        except ConfigError:
            old = None  # not a calibration file: there is nothing to replace
        if old is not None and old.judge.sha256 == judge:
            return old.tau, f"the calibration in {replacing}"
    applied = summary.get("support_threshold") if isinstance(summary, dict) else None
    if isinstance(applied, dict) and applied and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in applied.values()):
        taus = {str(k): float(v) for k, v in applied.items()}
        return taus, "the τ the labelled run applied"
    return dict(FITTED), "the shipped τ"


def worse_than_replaced(cal: Calibration) -> str | None:
    """Why `cal` must not replace what it replaces, in one line: out of fold on its own labels
    it agrees worse than the replaced τ, or its mean is further from the labels' mean; None
    when it is no worse on either."""
    oof = cal.out_of_fold or {}
    fitted, old = oof.get("fitted"), oof.get("replaced")
    mean = oof.get("mean") or {}
    gap, old_gap = mean.get("gap_fitted"), mean.get("gap_replaced")
    why = []
    if fitted is not None and old is not None and fitted < old:
        why.append(f"agrees worse with its own labels: {fitted:.3f} against {old:.3f}")
    if gap is not None and old_gap is not None and gap > old_gap:
        why.append(f"moves the {mean.get('of', 'mean')} away from its labels' mean "
                   f"{mean.get('labels'):.3f}: {mean.get('fitted'):.3f} (off by {gap:.3f}) "
                   f"against {mean.get('replaced'):.3f} (off by {old_gap:.3f})")
    if not why:
        return None
    return (f"the fitted τ {cal.tau} is worse than "
            f"{(cal.replaces or {}).get('source', 'the τ it replaces')} "
            f"({taus_text((cal.replaces or {}).get('tau'))}) out of fold "
            f"({oof.get('folds')} folds): it {' and '.join(why)}; the calibration was not "
            "written (label more samples, or give --force to write it anyway)")


def taus_text(tau: Any) -> str:
    """τ in words: one number, or "en 0.6, zh 0.45"."""
    if isinstance(tau, dict):
        return ", ".join(f"{k} {v:g}" for k, v in tau.items())
    return f"{tau:g}" if isinstance(tau, (int, float)) else "?"


def write_calibration(cal: Calibration, path: Path) -> None:
    from localeval.results.runfiles import write_text

    write_text(Path(path), json.dumps(cal.model_dump(), indent=2, ensure_ascii=False) + "\n")


def load_calibration(path: Path) -> Calibration:
    """A calibration file, or ConfigError in one line."""
    return _load(path)[0]


def _load(path: Path) -> tuple[Calibration, str]:
    """A calibration file and the sha256 of its bytes, or ConfigError in one line."""
    try:
        data = Path(path).read_bytes()
        raw = json.loads(data.decode("utf-8"))
    except OSError as exc:
        raise ConfigError(f"--calibration {path}: {exc.strerror or exc}") from None
    except (ValueError, RecursionError):
        raise ConfigError(f"--calibration {path} is not JSON; give a file written by "
                          "`localeval calibrate`") from None
    try:
        return Calibration.model_validate(raw), hashlib.sha256(data).hexdigest()
    except ValidationError as exc:
        loc, msg = first_error(exc, "file")
        raise ConfigError(f"--calibration {path}: {loc}: {msg} (write it with "
                          "`localeval calibrate RUN_DIR --out FILE`)") from None


def check_calibration(cal: Calibration, path: Path, judge_sha256: str,
                      prompts: dict[str, str], needed: dict[str, str] | None = None) -> None:
    """ConfigError in one line when `cal` holds what `calibrate` never fits (τ outside the
    grid, no label), was fitted for another judge, does not cover a template of `needed` (the
    templates of the run's metrics whose verdicts τ decides: template → sha256), or a template
    it shares with this run (`prompts`, `needed`) has changed since."""
    wrong = _implausible(cal)
    if wrong:
        raise ConfigError(f"--calibration {path}: {wrong}; `localeval calibrate RUN_DIR --out "
                          "FILE` writes a calibration file (do not edit one by hand)")
    if cal.judge.sha256 != judge_sha256:
        raise ConfigError(f"--calibration {path} was fitted for another judge ({cal.judge.name}, "
                          f"sha256 {cal.judge.sha256[:12]}…), not this run's ({judge_sha256[:12]}"
                          "…); calibrate this judge: `localeval label` a run of it, then "
                          "`localeval calibrate`")
    prompts = {**prompts, **(needed or {})}
    changed = sorted(t for t, sha in cal.prompts.items() if t in prompts and prompts[t] != sha)
    if changed:
        raise ConfigError(f"--calibration {path} was fitted with other templates "
                          f"({', '.join(changed[:3])}{' …' if len(changed) > 3 else ''} changed "
                          "since); label a run made with these templates and calibrate again")
    missing = sorted(t for t in needed or {} if t not in cal.prompts)
    if missing:
        raise ConfigError(f"--calibration {path} does not cover the templates "
                          f"{', '.join(missing[:3])}{' …' if len(missing) > 3 else ''} of this "
                          "run's metrics (its labelled run did not use them); calibrate on a "
                          "labelled run of these metrics, or run only the metrics it covers")


def _implausible(cal: Calibration) -> str | None:
    """What in `cal` `calibrate` could not have written, in words; None when nothing."""
    if not GRID[0] <= cal.tau <= GRID[-1]:
        return (f"tau {cal.tau} is outside the range calibrate fits ({GRID[0]} … {GRID[-1]})")
    if cal.n_claims + cal.n_answers == 0:
        return "it was fitted on no label (n_claims and n_answers are 0)"
    if cal.n_supported > cal.n_claims or cal.n_right > cal.n_answers:
        return "its counts disagree (more supported claims or right answers than labels)"
    if not cal.prompts:
        return "it names no template (prompts is empty)"
    return None


def tau_templates(settings: Any) -> dict[str, str]:
    """sha256 of every template (both languages) of the metrics of a run with these settings
    whose verdicts τ decides: what a calibration must cover."""
    from localeval.metrics import resolve
    from localeval.metrics.claims.verdicts import DECIDED_BY_TAU
    from localeval.prompts import metric_prompt_hashes

    metrics = resolve(settings.metrics, settings.rubrics)
    return metric_prompt_hashes([m for m in metrics if m.name in DECIDED_BY_TAU])


def current_prompts(names: list[str]) -> dict[str, str]:
    """sha256 of each named template ("en/faithfulness_verdicts.j2") as this version ships it."""
    from localeval.prompts import LANGUAGES, template_sha256

    out = {}
    for name in names:
        lang, _, file = name.partition("/")
        if lang in LANGUAGES and file.endswith(".j2"):
            try:
                out[name] = template_sha256(lang, file[: -len(".j2")])
            except OSError:
                continue  # a template this version no longer ships: no run uses it
    return out


def judge_sha256(settings: Any) -> str:
    """The sha256 of the judge a run with these settings loads ("fake" for the fake judge)."""
    if settings.judge == "fake":
        return "fake"
    from localeval import models

    if settings.judge_model is not None:
        return models.sha256_of_user_path(Path(settings.judge_model))
    manifest = models.load_manifest()
    return models.expected_sha256(manifest.get(manifest.profile(settings.profile)["judge"]))


def calibrated(settings: Any, path: Path) -> tuple[Any, Calibration, dict[str, Any]]:
    """`run --calibration FILE`: the settings with the file's τ as `support_threshold`, once the
    file is checked against this run's judge and templates (ConfigError in one line), the
    calibration, and its record for summary.json (the file, its sha256, τ, the labels)."""
    if settings.support_threshold is not None:
        raise ConfigError("--calibration and --support-threshold both set τ; give one of them")
    cal, sha = _load(path)
    check_calibration(cal, path, judge_sha256(settings), current_prompts(list(cal.prompts)),
                      tau_templates(settings))
    record = {"path": str(path), "sha256": sha, "tau": cal.tau, "judge": cal.judge.name,
              "n_claims": cal.n_claims, "n_answers": cal.n_answers,
              "n_labels": cal.n_claims + cal.n_answers, "created": cal.created}
    return settings.model_copy(update={"support_threshold": cal.tau}), cal, record
