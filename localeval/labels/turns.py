"""A conversation's assistant turns as units a person labels: each turn's own record, made from
the conversation's `details.turns` (its scores and details, the question it was scored with, its
reply), under the id `<conversation id>#turn<n>` (data/conversation.turn_id) and the
conversation's input_hash. A single-turn row has none."""

from __future__ import annotations

from pydantic import ValidationError

from localeval.data.conversation import turn_id
from localeval.results.records import SampleRecord

TURNS = "turns"
"""The conversation record's details key of its assistant turns (localeval/conversation.py)."""


def turn_records(record: SampleRecord) -> list[SampleRecord]:
    """The conversation's assistant turns as records, in order; a turn entry that is not one
    (a hand-edited details.turns) is left out. [] for a single-turn row."""
    entries = record.details.get(TURNS)
    if not isinstance(entries, list):
        return []
    out = []
    for entry in entries:
        number = entry.get("turn") if isinstance(entry, dict) else None
        if isinstance(number, bool) or not isinstance(number, int):
            continue
        question = entry.get("standalone") or entry.get("asked")
        try:
            out.append(SampleRecord(
                id=turn_id(record.id, number), line=record.line, language=record.language,
                question=question if isinstance(question, str) else None,
                answer=entry.get("answer") if isinstance(entry.get("answer"), str) else None,
                input_hash=record.input_hash, scores=entry.get("scores") or {},
                details=entry.get("details") or {}, errors=entry.get("errors") or {},
                skipped=entry.get("skipped") or {}))
        except ValidationError:
            continue
    return out


def per_turn(record: SampleRecord, metric: str) -> bool:
    """Whether `metric` of this record is a mean over its assistant turns (a single-turn metric
    on a conversation), so that a label of it may judge one turn."""
    detail = record.details.get(metric)
    return isinstance(detail, dict) and detail.get("mean_over") == "assistant turns"
