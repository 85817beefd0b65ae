"""The live progress bar of `run`: samples done / total, judge calls, tokens/s and the ETA.

Drawn by tqdm on stderr, only when stderr is a terminal (never in logs, pipes or CI) and not
--quiet. A background thread refreshes the judge figures twice a second, so the bar moves while
a slow sample is still being judged.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

StatsFn = Callable[
    [], Any
]  # returns a JudgeStats-like object (calls, cached, completion_tokens) or None


class Progress:
    """A tqdm bar, or nothing when disabled. `advance()` once per finished sample."""

    def __init__(
        self,
        total: int,
        *,
        done: int = 0,
        enabled: bool = True,
        stats: StatsFn | None = None,
        interval: float = 0.5,
    ) -> None:
        self._bar = None
        self._stats = stats
        self._stop = threading.Event()
        self._started = time.perf_counter()
        self._thread: threading.Thread | None = None
        if not enabled or not sys.stderr.isatty():
            return
        from tqdm import tqdm

        try:  # a pseudo-terminal may report 0 columns: tqdm would then draw nothing
            width = os.get_terminal_size(sys.stderr.fileno()).columns
        except (OSError, ValueError):
            width = 0
        self._bar = tqdm(
            total=total,
            initial=done,
            unit="sample",
            file=sys.stderr,
            desc="evaluating",
            smoothing=0.1,
            **({"dynamic_ncols": True} if width > 0 else {"ncols": 110, "nrows": 24}),
        )
        if stats is not None:
            self._thread = threading.Thread(
                target=self._refresh_loop, args=(interval,), daemon=True
            )
            self._thread.start()

    @property
    def enabled(self) -> bool:
        return self._bar is not None

    def postfix(self) -> dict[str, Any]:
        stats = self._stats() if self._stats is not None else None
        if stats is None:
            return {}
        elapsed = max(1e-6, time.perf_counter() - self._started)
        return {
            "judge calls": stats.calls,
            "cached": stats.cached,
            "tok/s": f"{stats.completion_tokens / elapsed:.1f}",
        }

    def _refresh_loop(self, interval: float) -> None:
        while not self._stop.wait(interval):
            bar = self._bar
            if bar is None:
                return
            bar.set_postfix(self.postfix(), refresh=True)

    def advance(self, n: int = 1) -> None:
        if self._bar is not None:
            self._bar.set_postfix(self.postfix(), refresh=False)
            self._bar.update(n)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self._bar is not None:
            self._bar.set_postfix(self.postfix(), refresh=False)
            self._bar.close()
            self._bar = None
