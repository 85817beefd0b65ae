"""CI gates: `--fail-under metric=value` on a run's means, `--max-drop metric=value` on a
comparison.

A gate names a score key as it appears in summary.json: a metric (`faithfulness`), a sub-score
(`context_relevance.answer_supported_precision`) or a retrieval figure (`mrr`, `mrr@10`).
A gate reads its score in the metric's declared direction (`@metric(higher_is_better=…)`): on
a lower-is-better score (`refusal`) `--fail-under refusal=0.2` fails when the mean is above 0.2,
and `--max-drop refusal=0.05` when B's mean rose more than 0.05 — the score got worse either way.
A failed gate → exit status 1; a gate that names no known score → usage error (exit 2).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from localeval.errors import UsageError
from localeval.judge import fake
from localeval.names import did_you_mean, owner_of, read_key

EPS = 1e-9  # float noise in a mean never fails a gate


@dataclass(frozen=True)
class Gate:
    key: str
    value: float
    flag: str  # "--fail-under" or "--max-drop"

    def __str__(self) -> str:
        return f"{self.flag} {self.key}={self.value:g}"


def parse_gates(specs: Iterable[str] | Mapping[str, float] | None, flag: str,
                warn: Callable[[str], None] | None = None) -> list[Gate]:
    """`["faithfulness=0.8", ...]` (or a mapping) → gates; bad syntax is a usage error. A key
    under its old name (`faithfulness.soft`) gates the new one, with a note (names.read_key)."""
    if not specs:
        return []
    items = specs.items() if isinstance(specs, Mapping) else (_split(s, flag) for s in specs)
    gates: list[Gate] = []
    for key, raw in items:
        try:
            value = float(raw)
        except (TypeError, ValueError):
            raise UsageError(f"{flag} {key}={raw}: the value must be a number") from None
        if not math.isfinite(value):
            raise UsageError(f"{flag} {key}={raw}: the value must be a finite number")
        if flag == "--max-drop" and value < 0:
            raise UsageError(f"{flag} {key}={raw}: a drop is given as a positive number, e.g. 0.05")
        gates.append(Gate(key=read_key(key, f"{flag} {key}={raw}", warn), value=value,
                          flag=flag))
    return gates


def _split(spec: str, flag: str) -> tuple[str, str]:
    key, sep, value = spec.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise UsageError(
            f"{flag} expects METRIC=VALUE (e.g. {flag} faithfulness=0.8), got {spec!r}"
        )
    return key.strip(), value.strip()


def known_names(metric_names: Iterable[str]) -> list[str]:
    """The gate names that can be checked before a run: metrics and retrieval figures."""
    from localeval.retrieval import RETRIEVAL_METRICS

    return sorted(set(metric_names)) + [m for m in RETRIEVAL_METRICS if m not in metric_names]


def check_names(
    gates: Iterable[Gate], metric_names: Iterable[str], selected: Iterable[str] | None = None
) -> None:
    """Before a run: every gate must name a known metric (or a sub-score of one, or a retrieval
    figure with an optional @k), and one the run will compute when metrics were chosen."""
    from localeval.retrieval import RETRIEVAL_METRICS

    names = list(metric_names)
    chosen = None if selected is None else set(selected)
    for gate in gates:
        base = owner_of(gate.key)
        if base in names:
            owners = {base}
        elif re.sub(r"@\d+$", "", gate.key) in RETRIEVAL_METRICS:
            owners = {base, "retrieval"}  # one "retrieval" metric or one metric per figure
        else:
            known = known_names(names)
            raise UsageError(
                f"{gate.flag}: unknown metric {gate.key!r}{did_you_mean(gate.key, known)}"
                f" (known: {', '.join(known)})"
            )
        if chosen is not None and not owners & chosen:
            raise UsageError(
                f"{gate}: {base!r} is not among the metrics this run computes "
                f"({', '.join(sorted(chosen))}); add it to --metrics"
            )


def _unknown_key(gate: Gate, keys: list[str]) -> UsageError:
    listed = ", ".join(keys) if keys else "none"
    return UsageError(
        f"{gate}: the run has no score {gate.key!r}{did_you_mean(gate.key, keys)}"
        f" (scores in this run: {listed})"
    )


def higher_is_better(key: str, summary: Mapping[str, Any] | None = None) -> bool:
    """The direction its metric declares for a score key, a rubric's as the run's settings hold
    it (higher, for a key of no metric)."""
    from localeval.report.compare import higher_is_better as declared

    return declared(key, *([summary] if summary is not None else []))


def is_fake(summary: Mapping[str, Any]) -> bool:
    """Whether the run's judge was the fake one (by setting, or a FakeJudge object)."""
    judge = (summary.get("models") or {}).get("judge")
    named = judge.get("name") if isinstance(judge, Mapping) else None
    return (summary.get("settings") or {}).get("judge") == "fake" or named == "fake"


def check_fail_under(gates: Iterable[Gate], summary: Mapping[str, Any], *,
                     max_unscored: int = 0, advisory_until_checked: bool = False,
                     warn: Callable[[str], None] | None = None) -> list[str]:
    """One message per failed gate: the mean below the value, nothing scored, or more samples
    than `max_unscored` that the gate's score does not cover (errors, skips, undefined scores,
    rows that could not be read); every gate fails on a run of the fake judge. With
    `advisory_until_checked`, a failed gate on a judge metric that no meta-eval has checked
    with this run's judge (meta_eval/checks.py) is passed to `warn` instead."""
    metrics: Mapping[str, Mapping[str, Any]] = summary.get("metrics") or {}
    unreadable = len((summary.get("dataset") or {}).get("input_errors") or [])
    forged = is_fake(summary) and not fake.allowed()
    failures = []
    for gate in gates:
        if gate.key not in metrics:
            raise _unknown_key(gate, list(metrics))
        message = _fail_under(gate, metrics[gate.key], unreadable, max_unscored, forged,
                              higher_is_better(gate.key, summary))
        if message is None:
            continue
        if advisory_until_checked and _unchecked(gate, summary):
            if warn:
                warn(f"advisory (no meta-eval of this metric with this judge is recorded; run "
                     f"`localeval meta-eval` on labelled data to make it count): {message}")
        else:
            failures.append(message)
    return failures


def _fail_under(gate: Gate, m: Mapping[str, Any], unreadable: int, max_unscored: int,
                forged: bool, higher: bool) -> str | None:
    """Why one --fail-under gate fails on its score's summary `m`, or None when it passes."""
    mean = m.get("mean")
    missing = {"errors": int(m.get("errors", 0)), "skipped": int(m.get("skipped", 0)),
               "unscored": int(m.get("unscored", 0)), "unreadable rows": unreadable}
    total = sum(missing.values())
    if forged:
        return (f"gate failed: {gate.key}: the run's judge is the fake one (canned answers, for "
                f"localeval's tests); no gate passes on it ({gate})")
    if mean is None:
        return (f"gate failed: {gate.key}: no sample was scored ({m.get('errors', 0)} errors, "
                f"{m.get('skipped', 0)} skipped) ({gate})")
    if not higher and mean > gate.value + EPS:
        return (f"gate failed: {gate.key} mean {mean:.4f} > {gate.value:g}, and lower is "
                f"better (n={m.get('count', 0)}) ({gate})")
    if higher and mean < gate.value - EPS:
        return (f"gate failed: {gate.key} mean {mean:.4f} < {gate.value:g} "
                f"(n={m.get('count', 0)}) ({gate})")
    if total > max_unscored:
        said = ", ".join(f"{n} {what}" for what, n in missing.items() if n)
        return (f"gate failed: {gate.key}: {total} sample(s) not scored ({said}), more than "
                f"--max-unscored {max_unscored}; fix them (see the errors above / report.md) "
                f"or allow them with --max-unscored {total} ({gate})")
    return None


def check_max_drop(gates: Iterable[Gate], comparison: Any, *, max_unpaired: int = 0) -> list[str]:
    """One message per failed regression gate: B's paired mean fell more than VALUE below A's,
    or more than `max_unpaired` samples were scored in one run only (they are not compared)."""
    rows = {row.key: row for row in comparison.rows}
    failures = []
    for gate in gates:
        if gate.key not in rows:
            raise _unknown_key(gate, list(rows))
        row = rows[gate.key]
        unpaired = row.only_a + row.only_b
        if row.n == 0:
            failures.append(f"gate failed: {gate.key}: no sample scored in both runs ({gate})")
        elif (row.diff if row.higher_is_better else -row.diff) < -gate.value - EPS:
            moved = "dropped" if row.higher_is_better else "rose, and lower is better,"
            failures.append(
                f"gate failed: {gate.key} {moved} by {abs(row.diff):.4f} > {gate.value:g} "
                f"on {row.n} paired samples ({row.mean_a:.4f} → {row.mean_b:.4f}) ({gate})"
            )
        elif unpaired > max_unpaired:
            failures.append(
                f"gate failed: {gate.key}: {unpaired} sample(s) scored in one run only "
                f"({row.only_a} only in A, {row.only_b} only in B) could not be paired, more "
                f"than --max-unpaired {max_unpaired}; allow them with --max-unpaired "
                f"{unpaired} ({gate})"
            )
    return failures


def _unchecked(gate: Gate, summary: Mapping[str, Any]) -> bool:
    """A judge metric's gate with no recorded meta-eval for the run's judge (never the fake)."""
    from localeval.meta_eval import checks
    from localeval.metrics import REGISTRY

    metric = REGISTRY.get(owner_of(gate.key))
    judge = (summary.get("models") or {}).get("judge")
    sha = judge.get("sha256") if isinstance(judge, Mapping) else None
    return bool(metric and metric.uses_judge and not is_fake(summary)
                and not checks.checked(metric.name, sha))
