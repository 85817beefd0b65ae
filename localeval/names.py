"""Score-key names shared by the runner, the run folder and the gates: which metric owns a key,
a "did you mean" hint for a name that is not known, and the one meaning of each score-key
suffix with the old names that still read as the new ones.

Suffixes (docs/metrics.md, *Score keys*): a metric's bare name (`faithfulness`) is its headline;
`NAME.weighted` is the probability-weighted score (the judge's P in place of each verdict or
level), `NAME.greedy` the score of the greedy verdicts or level, on every score that has both
(a metric that has both writes both, even the one its headline equals); `answer_similarity.cosine`
is the cosine before rescaling. The old names `.soft` (the weighted score) and `.raw` (a rubric's
greedy level, answer_similarity's cosine) are read as the new ones (`current_key`: old run
folders, gates, labels, API calls)."""

from __future__ import annotations

import difflib
import warnings
from collections.abc import Callable, Iterable, Mapping
from typing import TypeVar

WEIGHTED = ".weighted"
"""The probability-weighted score's suffix (`faithfulness.weighted`)."""
GREEDY = ".greedy"
"""The suffix of the score of the greedy verdicts or level (`faithfulness.greedy`)."""
COSINE = ".cosine"
"""answer_similarity's cosine before rescaling (`answer_similarity.cosine`)."""

RENAMED_KEYS: dict[str, str] = {"answer_similarity.raw": "answer_similarity" + COSINE}
"""Old score keys read as new ones, whole keys (checked before the suffixes)."""
RENAMED_SUFFIXES: dict[str, str] = {".soft": WEIGHTED, ".raw": GREEDY}
"""Old suffixes read as new ones: `.soft` was the weighted score everywhere, `.raw` the greedy
level on rubrics."""

DIAGNOSIS_METRICS = ("claim_recall", "context_utilization", "noise_sensitivity",
                     "hallucination", "self_knowledge")
"""The diagnosis group (metrics/diagnosis.py); named here so that a report of a run without
them imports none of their code (report/view.py)."""

V = TypeVar("V")


def owner_of(key: str) -> str:
    """The metric that produced a score key: `metric`, `metric.sub` or `metric@k` → `metric`."""
    return key.split(".", 1)[0].split("@", 1)[0]


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`"; did you mean 'x'?"` for the closest known name, or `""` when none is close."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def current_key(key: str) -> str:
    """A score key under its current name: an old one (`faithfulness.soft`, `helpful.raw`,
    `answer_similarity.raw`) as the new one, any other as it is."""
    if key in RENAMED_KEYS:
        return RENAMED_KEYS[key]
    for old, new in RENAMED_SUFFIXES.items():
        if key.endswith(old) and len(key) > len(old):
            return key[: -len(old)] + new
    return key


def is_old(key: str) -> bool:
    """Whether `key` is an old name of a score key (`current_key` renames it)."""
    return current_key(key) != key


class OldScoreKeyWarning(FutureWarning):
    """A score key given under its old name (`faithfulness.soft`), read as the new one."""


def renamed_note(old: str, where: str) -> str:
    """The one line telling the user an old key was read as its new name."""
    new = current_key(old)
    return (f"{where}: {old!r} is the old name of {new!r} (`.soft` is now `.weighted`, a "
            f"rubric's `.raw` `.greedy`, answer_similarity.raw answer_similarity.cosine); read "
            f"as {new!r} — use the new name")


def read_key(key: str, where: str, warn: Callable[[str], None] | None = None) -> str:
    """A score key a user gave (a gate, a threshold, an API call) under its current name; an
    old name is read as the new one with a deprecation note: to `warn`, or an
    OldScoreKeyWarning."""
    new = current_key(key)
    if new != key:
        if warn is not None:
            warn(f"note: {renamed_note(key, where)}")
        else:
            warnings.warn(renamed_note(key, where), OldScoreKeyWarning, stacklevel=3)
    return new


def current_scores(scores: Mapping[str, V]) -> dict[str, V]:
    """Score key → value with every old key under its new name (an old run folder's record); a
    key already present under its new name wins over its old one."""
    out = dict(scores)
    for key in [k for k in out if is_old(k)]:
        value = out.pop(key)
        out.setdefault(current_key(key), value)
    return out


def headline_twins(keys: Iterable[str], alike: Callable[[str, str], bool]) -> list[str]:
    """The `NAME.weighted` / `NAME.greedy` keys among `keys` whose row reads exactly as their
    headline's (`NAME`, also among `keys`): `alike(key, headline)`. Tables leave them out and
    name them under (`same_note`); the JSON files keep them."""
    listed = list(keys)
    present = set(listed)
    return [key for key in listed for suffix in (WEIGHTED, GREEDY)
            if key.endswith(suffix) and (head := key[: -len(suffix)]) in present
            and alike(key, head)]


def same_as_headline(metrics: Mapping[str, Mapping[str, object]]) -> list[str]:
    """The headline twins (`headline_twins`) of a summary's metrics: the same mean, interval
    and counts (`faithfulness.greedy` is `faithfulness` by definition)."""
    shown = ("mean", "ci95", "count", "unscored", "errors", "skipped")
    return headline_twins(metrics, lambda key, head: bool(metrics[key].get("count")) and all(
        metrics[key].get(f) == metrics[head].get(f) for f in shown))


def same_note(hidden: Iterable[str], kept_in: str = "summary.json and results.jsonl have them"
              ) -> str:
    """The line under a table naming the headline twins it left out, and where they are."""
    return f"not shown, each the same as its headline: {', '.join(hidden)} ({kept_in})"
