"""Which labels judged the content a run holds: a label is bound to its sample's `input_hash`
(results.jsonl: the hash of the row's question, answer, contexts, reference and every other
field), for a conversation's turn to the turn's reply (`turn_text`), and for a claim label (a
class label too: labels/classes.py) to the claim's text (`statement`). A label is used only
when both still match the run's record, or when it says `"unbound": true` (whoever wrote it
vouches that it judges the sample as the run holds it now); every other one is left out and
counted by why.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from localeval.labels.store import Label
    from localeval.results.records import SampleRecord

# why a label is left out → the sentence after "N label(s) " (labels/store.LabelsRead.notes)
WHY = {
    "no_hash": ("carry no input_hash (rows written by hand, or by a localeval before labels "
                "were bound to what they judged): they are not used; give each row its sample's "
                "input_hash from results.jsonl, or \"unbound\": true to vouch that it judges "
                "the sample as the run holds it now"),
    "changed": ("judged another version of their sample (its question, answer, contexts or "
                "reference changed since: the input_hash is not the run's): they are not used; "
                "label those samples again"),
    "claim": ("judged a claim the sample no longer has at that index (the claim's text differs "
              "from the run's): they are not used; label those claims again"),
    "turn": ("judged a conversation's turn the run does not hold as labelled (no assistant turn "
             "of that number, or its reply differs): they are not used; label those turns "
             "again"),
    "unchecked": ("are for samples whose record in results.jsonl carries no input_hash, so what "
                  "they judged cannot be checked: they are not used; run the dataset again into "
                  "the folder with --resume (it redoes such samples)"),
}


@dataclass(frozen=True)
class Judged:
    """What a record holds that a label judged: its input_hash, per metric its claims' texts in
    index order, and for a conversation's turn (labels/turns.py) the turn's reply."""

    input_hash: str
    claims: dict[str, list[str]] = field(default_factory=dict)
    turn_text: str | None = None


def judged(record: SampleRecord, turn_text: str | None = None) -> Judged:
    """Its input_hash and the claim texts each claim label metric indexes: a metric's
    `statements`, and a class label's (labels/classes.py) `answer_claims` / `truth_claims`."""
    from localeval.labels.classes import CLASSES, class_claims

    claims: dict[str, list[str]] = {}
    for metric, detail in record.details.items():
        statements = detail.get("statements") if isinstance(detail, dict) else None
        if isinstance(statements, list):
            claims[metric] = [s.get("statement") if isinstance(s, dict)
                              and isinstance(s.get("statement"), str) else "" for s in statements]
    for side in CLASSES:
        found = class_claims(record.details, side)
        if found is not None:
            claims[side] = found
    return Judged(record.input_hash, claims, turn_text)


def units(record: SampleRecord) -> dict[str, Judged]:
    """What the labels of a record and of each of its assistant turns (a conversation's) must
    match, by the id each labels (Label.unit)."""
    from localeval.labels.turns import turn_records

    out = {record.id: judged(record)}
    for turn in turn_records(record):
        out[turn.id] = judged(turn, turn.answer or "")
    return out


def run_content(run_dir: Path) -> dict[str, Judged]:
    """Per sample id of the run's results.jsonl (and per conversation's turn), what its labels
    must match."""
    from localeval.results.records import RESULTS_FILE, read_results

    read = read_results(Path(run_dir) / RESULTS_FILE, lambda r, _o, _n: units(r))
    return {k: v for found in read.records for k, v in found.items()}


def binding(content: Judged, metric: str, claim: int | None) -> dict[str, Any]:
    """The fields a label of this sample (and claim) is written with."""
    out: dict[str, Any] = {"input_hash": content.input_hash or None}
    if content.turn_text is not None:
        out["turn_text"] = content.turn_text
    if claim is not None:
        texts = content.claims.get(metric) or []
        out["statement"] = texts[claim] if 0 <= claim < len(texts) else None
    return out


def checker(content: Mapping[str, Judged]) -> Callable[[Label], str | None]:
    """label → None when it may be used (bound to the run's content, unbound by its writer's
    word, or for an id the run lacks: the estimate says that), else the key of WHY."""

    def check(label: Label) -> str | None:
        have = content.get(label.unit)
        if label.unbound or (have is None and label.turn is None):
            return None
        if have is None:  # a turn the conversation does not have (or no such sample)
            return "turn" if label.id in content else None
        if not have.input_hash:
            return "unchecked"
        if not label.input_hash:
            return "no_hash"
        if label.input_hash != have.input_hash:
            return "changed"
        if label.turn is not None and label.turn_text != have.turn_text:
            return "turn"
        if label.claim is not None:
            texts = have.claims.get(label.metric) or []
            if not (label.claim < len(texts) and label.statement == texts[label.claim]):
                return "claim"
        return None

    return check
