"""What a generation writes: the test set (rows `run` reads), the corpus beside it, the dropped
candidates with why, the report, and the work file that makes a killed generation resumable
(each finished candidate appended at once; read back by the next start with the same inputs)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from localeval.errors import OutputError


class Row(BaseModel):
    """One test-set row: what `localeval run` reads, plus where it came from."""

    id: str
    question: str
    ground_truth: str
    reference_contexts: list[str]
    expected_ids: list[str]
    kind: str
    language: str
    source: str
    link: str | None = Field(None, description="pairs: how the two chunks are linked")
    parent: str | None = Field(None, description="colloquial: the row it rewrites")
    retyped: str | None = Field(None, description="colloquial: the filter the judge's own "
                                "casual form failed, when the row is its single question "
                                "retyped by rule instead (assemble.retype)")
    topic_ids: list[str] | None = Field(None, description="unanswerable: the chunk it is about")
    parts: list[str] | None = Field(None, description="pairs: the single-chunk drafts whose "
                                    "questions it joins (their tasks)")


def paths_for(out: Path) -> dict[str, Path]:
    """The files beside the test set `out` (testset.jsonl → testset.corpus.jsonl, ...; the
    review's decisions, written by `localeval label`, too)."""
    stem = out.name[: -len(out.suffix)] if out.suffix else out.name
    return {name: out.with_name(f"{stem}.{name}{ext}") for name, ext in
            (("corpus", ".jsonl"), ("dropped", ".jsonl"), ("report", ".json"),
             ("work", ".jsonl"), ("lock", ""), ("decisions", ".jsonl"))}


def dumps(obj: Any) -> str:
    return json.dumps(obj, ensure_ascii=False, separators=(", ", ": "))


def write_lines(path: Path, items: Iterable[Any]) -> None:
    """Write JSON lines atomically (a temporary file renamed over the target)."""
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with tmp.open("w", encoding="utf-8", newline="\n") as fh:
            for item in items:
                fh.write(dumps(item.model_dump(exclude_none=True) if isinstance(item, BaseModel)
                               else item) + "\n")
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def write_json(path: Path, obj: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(json.dumps(obj, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
        os.replace(tmp, path)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None


class WorkFile:
    """The finished candidates of a generation, one JSON line each after a header naming the
    inputs' fingerprint. A file with another fingerprint (other documents or settings) is
    started over; a torn last line (a kill mid-write) is ignored."""

    def __init__(self, path: Path, fingerprint: str) -> None:
        self.path = path
        self.done: dict[str, dict[str, Any]] = {}
        lines = (path.read_text(encoding="utf-8", errors="replace").splitlines()
                 if path.is_file() else [])  # a line torn inside a character: not JSON, ignored
        if lines and _header(lines[0]) == fingerprint:
            for line in lines[1:]:
                try:
                    item = json.loads(line)
                    self.done[item["task"]] = item
                except (ValueError, KeyError, TypeError):
                    continue
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            if self.done:
                torn = not path.read_bytes().endswith(b"\n")
                self._fh = path.open("a", encoding="utf-8", newline="\n")
                if torn:
                    self._fh.write("\n")
            else:
                self._fh = path.open("w", encoding="utf-8", newline="\n")
                self._fh.write(dumps({"fingerprint": fingerprint}) + "\n")
                self._fh.flush()
        except OSError as exc:
            raise OutputError(f"cannot write {path}: {exc.strerror or exc}") from None

    def add(self, item: dict[str, Any]) -> None:
        self.done[item["task"]] = item
        self._fh.write(dumps(item) + "\n")
        self._fh.flush()

    def close(self, *, remove: bool = False) -> None:
        self._fh.close()
        if remove:
            self.path.unlink(missing_ok=True)


def _header(line: str) -> str | None:
    try:
        return json.loads(line).get("fingerprint")
    except (ValueError, AttributeError):
        return None
