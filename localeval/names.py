"""Score-key names shared by the runner, the run folder and the gates: which metric owns a key,
and a "did you mean" hint for a name that is not known."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def owner_of(key: str) -> str:
    """The metric that produced a score key: `metric`, `metric.sub` or `metric@k` → `metric`."""
    return key.split(".", 1)[0].split("@", 1)[0]


def did_you_mean(name: str, choices: Iterable[str]) -> str:
    """`"; did you mean 'x'?"` for the closest known name, or `""` when none is close."""
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""
