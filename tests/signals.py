"""Signal dispositions for a child process a test stops by a signal."""

from __future__ import annotations

import signal


def default_dispositions() -> None:
    """`preexec_fn`: SIGINT, SIGTERM and SIGHUP at their defaults in the child, whatever the
    test's launcher ignored (a job started with `&` by a shell without job control ignores
    SIGINT, `nohup` SIGHUP). The runner keeps an inherited SIG_IGN on purpose (runner.py), so
    without this a signal test passes or fails by how the suite was started."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
