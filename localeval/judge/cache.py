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

from localeval.judge.base import JudgeReply, JudgeRequest


def cache_key(fingerprint: str, sampling: str, request: JudgeRequest) -> str:
    payload = json.dumps(
        [fingerprint, sampling, request.answer_schema, request.max_tokens, request.messages],
        ensure_ascii=False, sort_keys=True,
    )
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


class AnswerCache:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, reply TEXT NOT NULL,"
            " created REAL DEFAULT (julianday('now')))"
        )
        self._db.commit()

    def get(self, key: str) -> JudgeReply | None:
        with self._lock:
            row = self._db.execute("SELECT reply FROM answers WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        reply = JudgeReply.model_validate_json(row[0])
        return reply.model_copy(update={"cached": True})

    def put(self, key: str, reply: JudgeReply) -> None:
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO answers (key, reply) VALUES (?, ?)",
                             (key, reply.model_dump_json()))
            self._db.commit()

    def close(self) -> None:
        with self._lock:
            self._db.close()
