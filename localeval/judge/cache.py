"""Content-addressed SQLite store of judge answers.

Key = sha256(model fingerprint, sampling settings, schema, rendered messages). A rerun, or a
run resumed after a crash, asks the model nothing it has already answered.

The file carries a schema version (SQLite's `user_version`). A change of the key or of the table
bumps SCHEMA_VERSION and adds a step to MIGRATIONS: a step converts the rows when it can and
deletes them when the old keys cannot be mapped to new ones, so an old file never serves an
answer to a question it was not asked. A file made by a newer localeval is refused.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localeval.errors import ConfigError
from localeval.judge.interface import JudgeReply, JudgeRequest

SCHEMA_VERSION = 1
TABLE = (
    "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, reply TEXT NOT NULL,"
    " created REAL DEFAULT (julianday('now')))"
)


def cache_key(fingerprint: str, sampling: str, request: JudgeRequest) -> str:
    payload = json.dumps(
        [fingerprint, sampling, request.answer_schema, request.max_tokens, request.messages,
         *probe_key(request)],
        ensure_ascii=False, sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def probe_key(request: JudgeRequest) -> list[Any]:
    """What the probes add to the cache key (empty for a plain request; the verifier only
    when one is used, so keys without one are as before)."""
    key: list[Any] = [request.probe_fields, request.continuations] if (
        request.probe_fields or request.continuations) else []
    return [*key, request.verifier] if request.verifier else key


def _stamp_v1(db: sqlite3.Connection) -> None:
    """0 → 1: files from before the version existed have v1's table and keys; only stamp them."""
    db.execute(TABLE)


def forget_answers(db: sqlite3.Connection) -> None:
    """A migration step for a key change: old keys cannot be mapped to new ones, so drop them."""
    db.execute("DELETE FROM answers")


# version v → the step that brings a v file to v + 1
MIGRATIONS: dict[int, Callable[[sqlite3.Connection], None]] = {0: _stamp_v1}


class AnswerCache:
    """One SQLite file (WAL mode) that any number of runs and processes share.

    Each answer is committed as soon as it arrives, so a run killed at any moment keeps every
    answer it got; the next run serves them from here.
    """

    def __init__(self, path: Path, *, timeout: float = 30.0) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(
                str(self.path), check_same_thread=False, timeout=timeout, isolation_level=None
            )
            self._db.execute("PRAGMA journal_mode=WAL")
            self._upgrade(self._db)
        except ConfigError:
            self.close()
            raise
        except (OSError, sqlite3.Error) as exc:
            self.close()
            raise ConfigError(f"answer cache {self.path} cannot be used ({exc}); delete it, "
                              "choose another with --cache PATH, or run with --no-cache") from None

    def _upgrade(self, db: sqlite3.Connection) -> None:
        db.execute("BEGIN IMMEDIATE")  # one process migrates; the others wait, then see it done
        try:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:
                raise ConfigError(
                    f"answer cache {self.path} was written by a newer localeval (cache schema "
                    f"v{version}; this one reads v{SCHEMA_VERSION}); upgrade localeval, or use "
                    "another --cache PATH"
                )
            fresh = db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'answers'"
            ).fetchone() is None
            if fresh:
                db.execute(TABLE)
            else:
                for step in range(version, SCHEMA_VERSION):
                    MIGRATIONS[step](db)
            if version != SCHEMA_VERSION:
                db.execute(f"PRAGMA user_version = {int(SCHEMA_VERSION)}")
            db.execute("COMMIT")
        except BaseException:
            # a COMMIT that failed (a full disk) may have rolled back already: rolling back
            # again would raise "cannot rollback" in place of why
            if db.in_transaction:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
            raise

    @property
    def version(self) -> int:
        with self._lock:
            assert self._db is not None
            return int(self._db.execute("PRAGMA user_version").fetchone()[0])

    def get(self, key: str) -> JudgeReply | None:
        with self._lock:
            assert self._db is not None
            row = self._db.execute("SELECT reply FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        try:
            reply = JudgeReply.model_validate_json(row[0])
        except ValueError:  # a damaged row is a miss; the fresh answer replaces it
            return None
        return reply.model_copy(update={"cached": True})

    def put(self, key: str, reply: JudgeReply) -> None:
        stored = reply.model_copy(update={"cached": False}).model_dump_json()
        with self._lock:
            assert self._db is not None
            self._db.execute("INSERT OR REPLACE INTO answers (key, reply) VALUES (?, ?)",
                             (key, stored))

    def holds_answers(self) -> bool:
        with self._lock:
            assert self._db is not None
            return self._db.execute("SELECT 1 FROM answers LIMIT 1").fetchone() is not None

    def __len__(self) -> int:
        with self._lock:
            assert self._db is not None
            return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None
