"""Content-addressed SQLite store of judge answers.

Key = sha256(model fingerprint, sampling settings, schema, rendered messages). A rerun, or a
run resumed after a crash, asks the model nothing it has already answered.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from pathlib import Path

from localeval.errors import ConfigError
from localeval.judge.base import JudgeReply, JudgeRequest


def cache_key(fingerprint: str, sampling: str, request: JudgeRequest) -> str:
    payload = json.dumps(
        [fingerprint, sampling, request.answer_schema, request.max_tokens, request.messages,
         *request.probe_key()],
        ensure_ascii=False, sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class AnswerCache:
    """One SQLite file (WAL mode) that any number of runs and processes share.

    Each answer is committed as soon as it arrives, so a run killed at any moment keeps every
    answer it got; the next run serves them from here.
    """

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(self.path), check_same_thread=False, timeout=30)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, reply TEXT NOT NULL,"
                " created REAL DEFAULT (julianday('now')))"
            )
            self._db.commit()
        except (OSError, sqlite3.Error) as exc:
            raise ConfigError(f"answer cache {self.path} cannot be used ({exc}); delete it, "
                              "choose another with --cache PATH, or run with --no-cache") from None

    def get(self, key: str) -> JudgeReply | None:
        with self._lock:
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
            self._db.execute("INSERT OR REPLACE INTO answers (key, reply) VALUES (?, ?)",
                             (key, stored))
            self._db.commit()

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._db.close()
