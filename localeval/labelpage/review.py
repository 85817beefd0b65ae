"""A test set made by `localeval generate`, reviewed row by row: accept, reject with a reason, or
edit the question or the reference answer. Every decision is one line appended (fsynced) to the
decisions file beside the test set (testset.jsonl → testset.decisions.jsonl); the later decision
for a row wins and every one is kept. A decision the page sends again (its request timed out
after it was written) carries the same `client_id` and is not appended twice. The kept test set
(testset.kept.jsonl) is the rows accepted or edited, edits applied, in the test set's order
(with `unreviewed`, the rows not yet decided too); the test set itself is never rewritten. A
decision is bound to the row it decided (its `input_hash`, as `run` computes it over the whole
row): a decision of a row whose content has changed since (a test set generated again with
--overwrite) is not applied, and counted; one the page sends for a row whose hash is no longer
the one it showed is refused."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from localeval.errors import OutputError, UsageError, first_error
from localeval.labels.store import CLIENT_ID_MAX, now

DECISIONS = ("accept", "reject", "edit")


class Decision(BaseModel):
    """One line of the decisions file."""

    model_config = ConfigDict(extra="forbid")

    id: str
    decision: Literal["accept", "reject", "edit"]
    reason: str | None = Field(None, description="why the row was rejected (required then)")
    question: str | None = Field(None, description="edit: the new question")
    ground_truth: str | None = Field(None, description="edit: the new reference answer")
    who: str | None = None
    when: str | None = None
    input_hash: str | None = Field(None, description="the decided row's input_hash")
    client_id: str | None = Field(None, min_length=1, max_length=CLIENT_ID_MAX,
                                  description="the page's id of the decision, made once")

    @model_validator(mode="after")
    def _complete(self) -> Decision:
        if self.decision == "reject" and not (self.reason or "").strip():
            raise ValueError("a rejection needs a reason")
        if self.decision == "edit":
            if self.question is None and self.ground_truth is None:
                raise ValueError("an edit gives a new question or ground_truth")
            for name in ("question", "ground_truth"):
                value = getattr(self, name)
                if value is not None and not value.strip():
                    raise ValueError(f"an edited {name} cannot be empty")
        return self


def beside(testset: Path, name: str) -> Path:
    """testset.jsonl → testset.<name>.jsonl (as generate names its corpus and work file)."""
    stem = testset.name[: -len(testset.suffix)] if testset.suffix else testset.name
    return testset.with_name(f"{stem}.{name}.jsonl")


def read_testset(path: Path) -> list[dict[str, Any]]:
    """The test set's rows; a row that is not an object with an id and a question is one line
    naming it."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read the test set {path}: "
                         f"{getattr(exc, 'strerror', None) or exc}") from None
    rows: list[dict[str, Any]] = []
    seen: dict[str, int] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            raise UsageError(f"{path}:{n}: not a JSON object; a test set has one row a line "
                             "(as `localeval generate` writes it)") from None
        rid = row.get("id") if isinstance(row, dict) else None
        if isinstance(rid, bool) or not isinstance(rid, str | int) or not isinstance(
                row.get("question"), str):
            raise UsageError(f"{path}:{n}: a test-set row needs an id and a question (a test set "
                             "written by `localeval generate`)")
        row["id"] = str(rid)
        if row["id"] in seen:
            raise UsageError(f"{path}:{n}: id {row['id']!r} again (first on line "
                             f"{seen[row['id']]}); ids must be unique")
        seen[row["id"]] = n
        rows.append(row)
    if not rows:
        raise UsageError(f"the test set {path} holds no row")
    return rows


def row_hash(row: dict[str, Any], line: int = 0) -> str:
    """The row's input_hash, as `localeval run` computes it for the same row (data/dataset.py);
    UsageError naming the line when the row is not one `run` reads."""
    from localeval.data.dataset import input_hash, to_sample

    try:
        return input_hash(to_sample(row, line))
    except ValueError as exc:
        raise UsageError(f"test-set row {line} (id {row.get('id')!r}): {exc}") from None


def read_decisions(path: Path, hashes: dict[str, str], client_ids: set[str] | None = None
                   ) -> tuple[dict[str, Decision], list[str]]:
    """The latest decision per row of the test set (id → input_hash) that was made on the row
    as it is now, and one line per bad row of the decisions file, then one per kind of decision
    left out for deciding other content. `client_ids` gets the client_id of every valid row."""
    latest: dict[str, Decision] = {}
    problems: list[str] = []
    stale = unbound = 0
    if not path.exists():
        return latest, problems
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                decision = Decision.model_validate_json(line)
            except ValidationError as exc:
                where, msg = first_error(exc, "row")
                problems.append(f"{path}:{n}: {where}: {msg}")
                continue
            if client_ids is not None and decision.client_id is not None:
                client_ids.add(decision.client_id)
            if decision.id not in hashes:
                problems.append(f"{path}:{n}: id {decision.id!r} is not in the test set")
                continue
            if not decision.input_hash:
                unbound += 1
                continue
            if decision.input_hash != hashes[decision.id]:
                stale += 1
                continue
            latest[decision.id] = decision
    if stale:
        problems.append(f"{path}: {stale} decision(s) were made on another version of their row "
                        "(the test set was generated again since: input_hash differs); they are "
                        "not applied — review those rows again")
    if unbound:
        problems.append(f"{path}: {unbound} decision(s) name no input_hash (written by hand or "
                        "by an older localeval), so the row they decided is unknown; they are "
                        "not applied — review those rows again")
    return latest, problems


def append_decision(path: Path, decision: Decision) -> None:
    """One line appended durably (`runfiles.append_line`); OutputError saying "not saved" when
    it is not on disk."""
    from localeval.results.runfiles import append_line

    try:
        append_line(path, (decision.model_dump_json(exclude_none=True) + "\n").encode("utf-8"))
    except OSError as exc:
        raise OutputError(f"not saved: cannot write {path}: {exc.strerror or exc}; the "
                          "decisions written before are kept") from None


def refuse_in_progress(testset: Path) -> None:
    """A test set whose generation is still under way (it holds the lock beside the test set)
    or was killed (its work file is there) is refused in one line: the file may still be
    replaced."""
    from localeval.generate.store import paths_for
    from localeval.results.folder import lock_holder

    pid = lock_holder(paths_for(testset)["lock"])
    if pid is not None:
        raise UsageError(f"{testset} is still being generated by `localeval generate` (pid "
                         f"{pid}); review it once the generation has finished")
    work = beside(testset, "work")
    if work.exists():
        raise UsageError(f"{testset} is still being generated ({work.name} is beside it); "
                         "review it once `localeval generate` has finished (run it again to "
                         "finish a killed generation)")


class ReviewSession:
    """A test set opened for review (module doc). Thread-safe."""

    def __init__(self, testset: Path, *, who: str | None = None) -> None:
        refuse_in_progress(testset)
        if not testset.is_file():
            raise UsageError(f"{testset} is not a file; give a test set made by "
                             "`localeval generate` (or a run folder)")
        self.testset = testset
        self.rows = read_testset(testset)
        self.by_id = {r["id"]: r for r in self.rows}
        self.hashes = {r["id"]: row_hash(r, n) for n, r in enumerate(self.rows, 1)}
        self.path = beside(testset, "decisions")
        self.kept_path = beside(testset, "kept")
        if self.path.is_symlink():
            raise OutputError(f"{self.path} is a symbolic link; remove it")
        self.who = who
        self._lock = threading.RLock()
        self.client_ids: set[str] = set()  # every decision's page id in the decisions file
        self.decisions, problems = read_decisions(self.path, self.hashes, self.client_ids)
        self.notes = problems[:5] + [p for p in problems[5:] if "not applied" in p]
        langs = [r.get("language") for r in self.rows]
        self.language = "zh" if langs.count("zh") > len(langs) / 2 else "en"

    def state(self) -> dict[str, Any]:
        with self._lock:
            counts = {d: 0 for d in DECISIONS}
            for d in self.decisions.values():
                counts[d.decision] += 1
            first_open = next((n for n, r in enumerate(self.rows)
                               if r["id"] not in self.decisions), len(self.rows))
            return {"kind": "review", "testset": str(self.testset), "who": self.who,
                    "language": self.language, "decisions_file": str(self.path),
                    "kept_file": str(self.kept_path), "notes": self.notes,
                    "total": len(self.rows), "undecided": len(self.rows) - len(self.decisions),
                    "start": first_open, **counts}

    def item(self, pos: int) -> dict[str, Any]:
        with self._lock:
            if not 0 <= pos < len(self.rows):
                raise UsageError(f"position {pos} is outside the {len(self.rows)} rows")
            row = self.rows[pos]
            decided = self.decisions.get(row["id"])
            return {"pos": pos, "row": {**{k: row.get(k) for k in (
                        "id", "kind", "language", "question", "ground_truth",
                        "reference_contexts", "expected_ids", "source", "link", "parent")},
                        "input_hash": self.hashes[row["id"]]},
                    "decision": decided.model_dump(exclude_none=True) if decided else None}

    def decide(self, rid: str, decision: str, *, reason: str | None = None,
               question: str | None = None, ground_truth: str | None = None,
               seen: str | None = None, client_id: str | None = None) -> dict[str, Any]:
        """Append one decision and return the new state. `seen`: the row's input_hash the page
        showed; a decision sent late (from the browser's queue, after a restart) for a row that
        changed since is refused, never applied to the new row. `client_id`: the page's id of
        the decision; one whose id is in the file already appends nothing (it was saved)."""
        with self._lock:
            if client_id is not None and client_id in self.client_ids:
                return {**self.state(), "already_saved": True}
            if rid not in self.by_id:
                raise UsageError(f"id {rid!r} is not in the test set")
            if seen is not None and seen != self.hashes[rid]:
                raise UsageError(f"row {rid!r} changed since the page showed it (the test set "
                                 "was generated again: its input_hash is not the one decided); "
                                 "review it again")
            row = self.by_id[rid]
            if decision == "edit":  # an unchanged field is no edit of it
                question = None if question == row.get("question") else question
                ground_truth = None if ground_truth == row.get("ground_truth") else ground_truth
                if question is None and ground_truth is None:
                    decision = "accept"
            try:
                made = Decision(id=rid, decision=decision, reason=reason, question=question,
                                ground_truth=ground_truth, who=self.who, when=now(),
                                input_hash=self.hashes[rid], client_id=client_id)
            except ValidationError as exc:
                where, msg = first_error(exc, "decision")
                raise UsageError(f"{where}: {msg}") from None
            append_decision(self.path, made)
            self.decisions[rid] = made
            if client_id is not None:
                self.client_ids.add(client_id)
            return self.state()

    def kept_rows(self, *, unreviewed: bool = False) -> list[dict[str, Any]]:
        out = []
        for row in self.rows:
            made = self.decisions.get(row["id"])
            if (made is None and not unreviewed) or (made is not None
                                                     and made.decision == "reject"):
                continue
            row = dict(row)
            if made is not None and made.decision == "edit":
                if made.question is not None:
                    row["question"] = made.question
                if made.ground_truth is not None:
                    row["ground_truth"] = made.ground_truth
            out.append(row)
        return out

    def write_kept(self, *, unreviewed: bool = False) -> dict[str, Any]:
        """Write the kept test set beside the test set (replaced atomically); its path and
        row count."""
        from localeval.results.runfiles import write_text

        with self._lock:
            rows = self.kept_rows(unreviewed=unreviewed)
            if not rows:
                raise UsageError("no row is kept yet: accept or edit rows first (or include the "
                                 "rows not reviewed yet)")
            if self.kept_path.resolve() == self.testset.resolve():
                raise UsageError(f"{self.kept_path} is the test set itself; rename the test set")
            write_text(self.kept_path, "".join(
                json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
            return {"path": str(self.kept_path), "rows": len(rows), **self.state()}
