"""τ for any judge, fitted from human claim labels: `localeval calibrate RUN_DIR --out FILE`,
used by `localeval run --calibration FILE`.

τ is the P(supported) a claim needs (metrics/claims/verdicts.py). The shipped τ was fitted for
the 1.5B judge; a judge with no learned head (a user's own GGUF) gets its own here: the grid
value (0.05 … 0.95) whose verdicts P ≥ τ best agree with the labelled claims (balanced accuracy;
ties: nearest the shipped τ). Claims come from the labels file in any order (random and
informative): each claim label is one (P, label) point; a sample-level label of 1 marks every
claim of that sample supported, a 0 marks its claim unsupported only when it has one claim (a
sample-level 0 says some claim is wrong, not which). Claims a rule settled (a quote, a check)
and claims without a P are left out: τ does not decide them.

The calibration file records the judge's sha256 and the run's template hashes; `run` refuses it
in one line for another judge or when a template it shares with the run has changed.
"""

from __future__ import annotations

import json
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
    agreement: float = Field(description="the criterion τ maximised, on the labels fitted on")
    default_agreement: float | None = Field(None, description="the shipped τ's, same labels")
    balanced_accuracy: float | None = Field(None, description="claims: P ≥ τ against labels")
    answer_auroc: float | None = Field(None, description="answers: right above wrong at τ")
    default_tau: dict[str, float] = Field(description="the shipped τ per language")
    fitted: str = Field(description="how τ was fitted")
    run: str | None = Field(None, description="the labelled run's fingerprint")
    labels: str = ""
    created: str = ""


def _cut(tau: float | dict[str, float], language: str) -> float:
    return tau if isinstance(tau, float) else tau.get(language, tau.get("en", 0.5))


def balanced_accuracy(points: list[tuple[float, int, str]], tau: float | dict[str, float]
                      ) -> float | None:
    """Mean of the shares of supported claims with P ≥ τ and unsupported ones with P < τ; None
    without both kinds of claim."""
    pos = [p >= _cut(tau, g) for p, y, g in points if y == 1]
    neg = [p < _cut(tau, g) for p, y, g in points if y == 0]
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


def answer_agreement(samples: list[tuple[list[dict[str, Any]], int, str]],
                     tau: float | dict[str, float]) -> float | None:
    """How often a right answer scores above a wrong one at τ, over every (right, wrong) pair of
    labelled answers (AUROC; ties ½); None without both kinds of answer."""
    scored = [(score_at(e, tau, g), y) for e, y, g in samples]
    pos = [s for s, y in scored if s is not None and y == 1]
    neg = [s for s, y in scored if s is not None and y == 0]
    if not pos or not neg:
        return None
    return sum((a > b) + 0.5 * (a == b) for a in pos for b in neg) / (len(pos) * len(neg))


def agreement(points: list[tuple[float, int, str]],
              samples: list[tuple[list[dict[str, Any]], int, str]],
              tau: float | dict[str, float]) -> float | None:
    """The mean of the criteria the labels allow: claims' balanced accuracy, answers' AUROC."""
    found = [x for x in (balanced_accuracy(points, tau), answer_agreement(samples, tau))
             if x is not None]
    return sum(found) / len(found) if found else None


def choose_tau(points: list[tuple[float, int, str]], prefer: float = 0.5,
               samples: list[tuple[list[dict[str, Any]], int, str]] = ()  # type: ignore[assignment]
               ) -> tuple[float, float]:
    """(τ, its agreement): the grid value whose verdicts best agree with the labels (claims
    and answers; `agreement`); LabelsError without both supported and unsupported ones."""
    if agreement(points, list(samples), 0.5) is None:
        pos = sum(y for _, y, _ in points)
        raise LabelsError(f"τ needs supported and unsupported claims (or right and wrong "
                          f"answers) among the labels: got {pos} supported claim(s) and "
                          f"{len(points) - pos} not; label more samples")
    best = max(GRID, key=lambda t: (agreement(points, list(samples), t), -abs(t - prefer)))
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


Sample = tuple[list[dict[str, Any]], int, str]
"""A labelled answer: its claims' entries, 1 when right (label 1) else 0, its language."""


def claim_points(run_dir: Path, labels_path: Path | None = None
                 ) -> tuple[list[tuple[float, int, str]], list[Sample], list[str]]:
    """(P, label, language) of every labelled claim τ decides (module doc), the labelled
    answers (a sample-level label, or labels of all its claims), and the notes."""
    read, _, notes = read_run_labels(run_dir, labels_path)
    records = {r.id: r for r in read_results(Path(run_dir) / RESULTS_FILE).records}
    by_sample: dict[tuple[str, str], dict[int | None, float]] = {}
    for label in read.labels.values():
        if label.label is not None and label.id in records:
            by_sample.setdefault((label.id, label.metric), {})[label.claim] = label.label
    points: list[tuple[float, int, str]] = []
    samples: list[Sample] = []
    for (sid, metric), marks in by_sample.items():
        record = records[sid]
        entries = _entries(record, metric)
        claims = {k: v for k, v in marks.items() if k is not None}
        whole = marks.get(None)
        if whole is None and entries and set(claims) >= set(range(len(entries))):
            whole = min(claims[i] for i in range(len(entries)))  # right only if every claim is
        if whole is not None and entries:
            samples.append((entries, int(whole == 1), record.language or "en"))
        if not claims and None in marks:  # a sample-level label only
            judged = [e for e in entries if _judged(e) is not None]
            if marks[None] == 1:
                claims = {i: 1.0 for i, e in enumerate(entries)}
            elif marks[None] == 0 and len(entries) == 1 and judged:
                claims = {0: 0.0}
        for i, y in claims.items():
            p = _judged(entries[i]) if i < len(entries) else None
            if p is not None:
                points.append((p, int(y >= 0.5), record.language or "en"))
    return points, samples, notes


def fit_calibration(run_dir: Path, labels_path: Path | None = None) -> tuple[Calibration,
                                                                             list[str]]:
    """The calibration of the run's judge from its labels, and the notes (one line each)."""
    from localeval.labels.estimate import run_fingerprint
    from localeval.metrics.claims.verdicts import FITTED

    run_dir = Path(run_dir)
    summary = read_json(run_dir / SUMMARY_FILE)
    judge = (summary.get("models") or {}).get("judge") if isinstance(summary, dict) else None
    if not isinstance(judge, dict) or not judge.get("sha256"):
        raise LabelsError(f"{run_dir}/{SUMMARY_FILE} does not name the judge's sha256 (a run "
                          "stopped before its summary); finish it with `localeval run --resume`")
    points, samples, notes = claim_points(run_dir, labels_path)
    if not points and not samples:
        raise LabelsError(f"no labelled claim or answer of {run_dir} is decided by τ (label "
                          "samples or claims of a claim metric such as faithfulness)")
    prefer = sum(FITTED.values()) / len(FITTED)
    tau, reached = choose_tau(points, prefer, samples)
    if len(samples) + len(points) < ROUGH:
        notes.append(f"τ was fitted on {len(samples)} labelled answers and {len(points)} claim "
                     f"labels: it is rough below {ROUGH}; label more samples to firm it up")

    def rounded(x: float | None) -> float | None:
        return None if x is None else round(x, 4)

    labels = Path(labels_path) if labels_path is not None else run_dir / "labels.jsonl"
    cal = Calibration(
        judge=JudgeRef(name=str(judge.get("name") or "?"), sha256=str(judge["sha256"])),
        prompts=dict((summary or {}).get("prompts") or {}),
        tau=tau, n_claims=len(points), n_supported=sum(y for _, y, _ in points),
        n_answers=len(samples), n_right=sum(y for _, y, _ in samples),
        agreement=round(reached, 4),
        default_agreement=rounded(agreement(points, samples, dict(FITTED))),
        balanced_accuracy=rounded(balanced_accuracy(points, tau)),
        answer_auroc=rounded(answer_agreement(samples, tau)), default_tau=dict(FITTED),
        fitted=f"grid {GRID[0]}…{GRID[-1]} by {GRID[1] - GRID[0]:.2f}: the τ whose verdicts "
               f"P(supported) ≥ τ best agree with the labels: the mean of the claims' balanced "
               f"accuracy ({len(points)} claim labels) and the answers' AUROC ({len(samples)} "
               "labelled answers), where each has both kinds; ties nearest the shipped τ",
        run=run_fingerprint(run_dir), labels=str(labels), created=now())
    return cal, notes


def write_calibration(cal: Calibration, path: Path) -> None:
    from localeval.results.runfiles import write_text

    write_text(Path(path), json.dumps(cal.model_dump(), indent=2, ensure_ascii=False) + "\n")


def load_calibration(path: Path) -> Calibration:
    """A calibration file, or ConfigError in one line."""
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--calibration {path}: {exc.strerror or exc}") from None
    except ValueError:
        raise ConfigError(f"--calibration {path} is not JSON; give a file written by "
                          "`localeval calibrate`") from None
    try:
        return Calibration.model_validate(raw)
    except ValidationError as exc:
        loc, msg = first_error(exc, "file")
        raise ConfigError(f"--calibration {path}: {loc}: {msg} (write it with "
                          "`localeval calibrate RUN_DIR --out FILE`)") from None


def check_calibration(cal: Calibration, path: Path, judge_sha256: str,
                      prompts: dict[str, str]) -> None:
    """ConfigError in one line when `cal` was fitted for another judge, or a template it shares
    with this run (`prompts`: template → sha256) has changed since."""
    if cal.judge.sha256 != judge_sha256:
        raise ConfigError(f"--calibration {path} was fitted for another judge ({cal.judge.name}, "
                          f"sha256 {cal.judge.sha256[:12]}…), not this run's ({judge_sha256[:12]}"
                          "…); calibrate this judge: `localeval label` a run of it, then "
                          "`localeval calibrate`")
    changed = sorted(t for t, sha in cal.prompts.items() if t in prompts and prompts[t] != sha)
    if changed:
        raise ConfigError(f"--calibration {path} was fitted with other templates "
                          f"({', '.join(changed[:3])}{' …' if len(changed) > 3 else ''} changed "
                          "since); label a run made with these templates and calibrate again")


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


def calibrated(settings: Any, path: Path) -> tuple[Any, Calibration]:
    """`run --calibration FILE`: the settings with the file's τ as `support_threshold`, once the
    file is checked against this run's judge and templates (ConfigError in one line)."""
    if settings.support_threshold is not None:
        raise ConfigError("--calibration and --support-threshold both set τ; give one of them")
    cal = load_calibration(path)
    check_calibration(cal, path, judge_sha256(settings), current_prompts(list(cal.prompts)))
    return settings.model_copy(update={"support_threshold": cal.tau}), cal
