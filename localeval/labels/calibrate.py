"""τ for any judge, fitted from human claim labels: `localeval calibrate RUN_DIR --out FILE`,
used by `localeval run --calibration FILE`.

τ is the P(supported) a claim needs (metrics/support/verdicts.py). The shipped τ was fitted for
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
    balanced_accuracy: float = Field(description="of P ≥ τ against the labels fitted on")
    default_tau: dict[str, float] = Field(description="the shipped τ per language")
    default_balanced_accuracy: float | None = Field(
        None, description="of the shipped τ against the same labels")
    fitted: str = Field(description="how τ was fitted")
    run: str | None = Field(None, description="the labelled run's fingerprint")
    labels: str = ""
    created: str = ""


def balanced_accuracy(points: list[tuple[float, int, str]], tau: float | dict[str, float]
                      ) -> float:
    """Mean of the shares of supported claims with P ≥ τ and unsupported ones with P < τ."""
    def cut(lang: str) -> float:
        return tau if isinstance(tau, float) else tau.get(lang, tau.get("en", 0.5))

    pos = [p >= cut(g) for p, y, g in points if y == 1]
    neg = [p < cut(g) for p, y, g in points if y == 0]
    return 0.5 * (sum(pos) / len(pos) + sum(neg) / len(neg))


def choose_tau(points: list[tuple[float, int, str]], prefer: float = 0.5) -> tuple[float, float]:
    """(τ, its balanced accuracy): the grid value that best separates the labelled claims;
    LabelsError without both supported and unsupported claims."""
    pos = sum(y for _, y, _ in points)
    if pos < 1 or pos == len(points):
        raise LabelsError(f"τ needs supported and unsupported claims among the labels: got "
                          f"{pos} supported and {len(points) - pos} not; label more samples")
    best = max(GRID, key=lambda t: (balanced_accuracy(points, t), -abs(t - prefer)))
    return best, balanced_accuracy(points, best)


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


def claim_points(run_dir: Path, labels_path: Path | None = None
                 ) -> tuple[list[tuple[float, int, str]], list[str]]:
    """(P, label, language) of every labelled claim τ decides (module doc), and the notes."""
    read, _, notes = read_run_labels(run_dir, labels_path)
    records = {r.id: r for r in read_results(Path(run_dir) / RESULTS_FILE).records}
    by_sample: dict[tuple[str, str], dict[int | None, float]] = {}
    for label in read.labels.values():
        if label.label is not None and label.id in records:
            by_sample.setdefault((label.id, label.metric), {})[label.claim] = label.label
    points: list[tuple[float, int, str]] = []
    for (sid, metric), marks in by_sample.items():
        record = records[sid]
        entries = _entries(record, metric)
        claims = {k: v for k, v in marks.items() if k is not None}
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
    return points, notes


def fit_calibration(run_dir: Path, labels_path: Path | None = None) -> tuple[Calibration,
                                                                             list[str]]:
    """The calibration of the run's judge from its labels, and the notes (one line each)."""
    from localeval.labels.estimate import run_fingerprint
    from localeval.metrics.support.verdicts import FITTED

    run_dir = Path(run_dir)
    summary = read_json(run_dir / SUMMARY_FILE)
    judge = (summary.get("models") or {}).get("judge") if isinstance(summary, dict) else None
    if not isinstance(judge, dict) or not judge.get("sha256"):
        raise LabelsError(f"{run_dir}/{SUMMARY_FILE} does not name the judge's sha256 (a run "
                          "stopped before its summary); finish it with `localeval run --resume`")
    points, notes = claim_points(run_dir, labels_path)
    if not points:
        raise LabelsError(f"no labelled claim of {run_dir} is decided by τ (label claims of a "
                          "claim metric such as faithfulness, or samples with one claim)")
    prefer = sum(FITTED.values()) / len(FITTED)
    tau, accuracy = choose_tau(points, prefer)
    if len(points) < ROUGH:
        notes.append(f"τ was fitted on {len(points)} claim labels: it is rough below {ROUGH}; "
                     "label more samples to firm it up")
    labels = Path(labels_path) if labels_path is not None else run_dir / "labels.jsonl"
    cal = Calibration(
        judge=JudgeRef(name=str(judge.get("name") or "?"), sha256=str(judge["sha256"])),
        prompts=dict((summary or {}).get("prompts") or {}),
        tau=tau, n_claims=len(points), n_supported=sum(y for _, y, _ in points),
        balanced_accuracy=round(accuracy, 4), default_tau=dict(FITTED),
        default_balanced_accuracy=round(balanced_accuracy(points, dict(FITTED)), 4),
        fitted=f"grid {GRID[0]}…{GRID[-1]} by {GRID[1] - GRID[0]:.2f}: the τ whose verdicts "
               f"P(supported) ≥ τ best agree with {len(points)} claim labels (balanced "
               "accuracy; ties nearest the shipped τ)",
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
