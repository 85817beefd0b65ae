"""Assertions for a RAG project's own pytest suite.

    from localeval.testing import assert_scores

    def test_answers_stay_grounded():
        assert_scores(rows, faithfulness=0.8, answer_relevance=0.7, profile="small")

The rows go through `localeval.evaluate` (the same loader, judge and answer cache as
`localeval run`: a rerun on unchanged rows sends no judge request). Every sample must reach
every threshold (`on="mean"`: the means must); on failure an AssertionError lists the failing
samples with the claims the judge did not find supported and its reasons (the first
`MAX_SHOWN`, then how many more; dataset text with its terminal controls escaped). A run of
the fake judge (canned answers) never passes outside localeval's own tests.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from localeval.api import EvalResults, evaluate
from localeval.data.readers import clip
from localeval.errors import UsageError
from localeval.names import owner_of, read_key
from localeval.safe import terminal_safe

MAX_SHOWN = 20  # failing samples (and unreadable rows) the message shows; the rest are counted

_TEXT_KEYS = ("statement", "claim", "sentence", "question", "context", "text", "entity")


def assert_scores(
    data: Any,
    thresholds: Mapping[str, float] | None = None,
    *,
    on: str = "sample",
    metrics: list[str] | str | None = None,
    **kwargs: Any,
) -> EvalResults:
    """Evaluate `data` and assert the scores reach their thresholds; return the EvalResults.

    Keyword arguments named after a metric (faithfulness=0.8) are thresholds, as are the keys
    of `thresholds` (for sub-scores: {"faithfulness.weighted": 0.7}; an old name such as
    "faithfulness.soft" is read as the new one, with an OldScoreKeyWarning); the others are
    settings or arguments of `localeval.evaluate` (profile="small", judge=..., language="en").
    on="sample": every sample must reach each threshold (an error, a skip or an unscored
    sample fails too); on="mean": the mean over the samples must.
    """
    __tracebackhide__ = True
    from localeval.metrics import REGISTRY

    wanted = {read_key(k, "assert_scores"): v for k, v in (thresholds or {}).items()}
    settings = {}
    for key, value in kwargs.items():
        (wanted if key in REGISTRY else settings)[key] = value
    if not wanted:
        raise UsageError("assert_scores needs a threshold, e.g. faithfulness=0.8")
    if on not in ("sample", "mean"):
        raise UsageError(f"assert_scores: on={on!r}; use 'sample' or 'mean'")
    if metrics is None:
        metrics = list(dict.fromkeys(owner_of(k) for k in wanted))
    results = evaluate(data, metrics=metrics, **settings)
    for key in wanted:
        results.mean(key)  # an unknown key is an error naming the known ones
    failures = _sample_failures(results, wanted)
    _refuse_fake(results)
    if on == "mean":
        gates = results.check(wanted)
        if gates:
            raise AssertionError(_message(results, wanted, failures, gates))
    elif failures:
        raise AssertionError(_message(results, wanted, failures, []))
    return results


def _refuse_fake(results: EvalResults) -> None:
    from localeval.judge import fake
    from localeval.results.gates import is_fake

    if is_fake(results.summary) and not fake.allowed():
        raise AssertionError(
            "localeval: the run's judge is the fake one (canned answers, for localeval's own "
            "tests); assert_scores passes on no run of it"
        )


def _sample_failures(
    results: EvalResults, wanted: Mapping[str, float]
) -> dict[str, list[tuple[str, str]]]:
    """Sample id → (metric, why) for each threshold it misses."""
    out: dict[str, list[tuple[str, str]]] = {}
    for r in results.records:
        for key, limit in wanted.items():
            metric = owner_of(key)
            score = r.scores.get(key)
            if metric in r.errors:
                why = f"{key}: error: {r.errors[metric]}"
            elif metric in r.skipped:
                why = f"{key}: skipped: {r.skipped[metric]}"
            elif score is None:
                reason = r.details.get(metric, {}).get("unscored_reason", "no score")
                why = f"{key}: unscored ({reason})"
            elif score < limit:
                why = f"{key} {score:.3f} < {limit}"
            else:
                continue
            out.setdefault(r.id, []).append((metric, why))
    return out


def _message(
    results: EvalResults,
    wanted: Mapping[str, float],
    failures: dict[str, list[tuple[str, str]]],
    gates: list[str],
) -> str:
    limits = ", ".join(f"{k} >= {v}" for k, v in wanted.items())
    head = (
        f"localeval: {len(failures)} of {len(results.records)} samples below "
        f"the thresholds ({limits})"
    )
    lines = [*gates, head] if gates else [head]
    by_id = {r.id: r for r in results.records}
    for rid, whys in list(failures.items())[:MAX_SHOWN]:
        r = by_id[rid]
        lines += ["", f"sample {clip(repr(rid), 200)} (row {r.line})"]
        if r.question:
            lines.append(f"  question: {clip(r.question, 200)}")
        if r.answer:
            lines.append(f"  answer: {clip(r.answer, 300)}")
        for metric, why in whys:
            lines.append(f"  {clip(why, 400)}")
            lines += [f"    {x}" for x in explain(r.details.get(metric, {}))]
    if len(failures) > MAX_SHOWN:
        lines += ["", f"... and {len(failures) - MAX_SHOWN} more failing sample(s) not shown "
                  "(localeval.evaluate on the same rows lists them all)"]
    if results.calibration_note:  # the scores rest on a τ fitted for another judge
        lines += ["", f"note: {results.calibration_note}"]
    if results.problems:
        shown = "; ".join(clip(str(p), 300) for p in results.problems[:MAX_SHOWN])
        more = len(results.problems) - MAX_SHOWN
        lines += ["", "rows not loaded: " + shown + (f"; ... and {more} more" if more > 0 else "")]
    return "\n".join(terminal_safe(line) for line in lines)


def explain(details: Mapping[str, Any], limit: int = 12) -> list[str]:
    """The parts of a metric's details that failed it: each item with verdict 0 (its text and
    the judge's reason); else the details in short JSON."""
    failed = [
        item
        for value in details.values()
        if isinstance(value, list)
        for item in value
        if isinstance(item, Mapping) and item.get("verdict") in (0, False)
    ]
    if not failed:
        shown = {k: v for k, v in details.items() if k != "unscored_reason"}
        return [clip(json.dumps(shown, ensure_ascii=False), 400)] if shown else []
    out = []
    for item in failed[:limit]:
        text = next((str(item[k]) for k in _TEXT_KEYS if item.get(k)), "?")
        reason = item.get("reason")
        out.append(f"x {clip(text, 200)!r}" + (f": {clip(str(reason), 200)}" if reason else ""))
    if len(failed) > limit:
        out.append(f"... and {len(failed) - limit} more")
    return out
