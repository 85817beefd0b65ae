"""SIGTERM and SIGHUP stop a run as Ctrl-C does: the event loop's main task is cancelled (at an
await, never in the middle of writing a record), what is done is saved, the summary and report are
written, and the command says how to resume. A signal set to be ignored (nohup) stays ignored."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import threading
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

from localeval.errors import RunInterrupted

STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGTERM", "SIGHUP") if hasattr(signal, n))


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP: a run stops as on Ctrl-C (what is done is saved, with the summary)."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        super().__init__(signal.Signals(signum).name)


class RunStopped(RunInterrupted):
    """RunInterrupted by SIGTERM or SIGHUP; exits 128 + the signal's number."""

    def __init__(self, signum: int, *args: Any) -> None:
        super().__init__(*args)
        self.signum, self.exit_code = signum, 128 + signum
        self.args = (str(self).replace("interrupted", f"stopped by {signal.Signals(signum).name}",
                                       1),)


@contextlib.contextmanager
def on_stop_signals(handler: Callable[[int, Any], None]) -> Iterator[None]:
    """Handle SIGTERM and SIGHUP with `handler` inside the block (main thread only; a signal
    set to be ignored, as nohup does, stays ignored); the previous handlers after it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = {}
    for sig in STOP_SIGNALS:
        current = signal.getsignal(sig)
        if current is not signal.SIG_IGN and current is not None:
            before[sig] = signal.signal(sig, handler)
    try:
        yield
    finally:
        for sig, old in before.items():
            signal.signal(sig, old)


def raise_stopped(signum: int, frame: Any) -> None:
    raise Stopped(signum)


def run_loop(coro: Coroutine[Any, Any, Any]) -> None:
    """asyncio.run(coro), where SIGTERM and SIGHUP cancel the run as Ctrl-C does (at an await,
    never in the middle of writing a record) and then raise Stopped; a second one raises at
    once."""
    got: list[int] = []

    async def main() -> None:
        loop, task = asyncio.get_running_loop(), asyncio.current_task()

        def stop(signum: int, frame: Any) -> None:
            if got:
                raise Stopped(signum)
            got.append(signum)
            loop.call_soon_threadsafe(task.cancel)  # type: ignore[union-attr]

        with on_stop_signals(stop):
            try:
                await coro
            except asyncio.CancelledError:
                if not got:
                    raise

    asyncio.run(main())
    if got:
        raise Stopped(got[0])
