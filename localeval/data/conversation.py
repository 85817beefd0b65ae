"""Conversation rows: a multi-turn chat read into one list of turns, from three shapes.

- localeval's own: `turns`: a list of `{role: "user" | "assistant", content, contexts}`, an
  assistant turn optionally with its `ground_truth`;
- ragas' multi-turn sample (`MultiTurnSample` exported to JSON): `user_input` a list of
  messages `{content, type: "human" | "ai" | "tool"}` (a tool message's content is what was
  retrieved for the next assistant message: its context), `reference` the conversation's
  expected outcome;
- DeepEval's conversational test case: `turns` of `{role, content, retrieval_context}`,
  `expected_outcome`, `scenario`, `context`.

Every shape becomes the same `turns` (dicts `{role, content, contexts?, ground_truth?}`, what
results.jsonl and the input hash hold) plus, when given, `expected_outcome`. A turn that cannot
be used is a ValueError naming it ("turn 3 (turns[2]): ..."), which the loader turns into the
row's problem: the other rows still run. Imported only for a row that is a conversation
(dataset.to_sample: it has `turns`, or a list `user_input`): a single-turn run never loads
this module."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from localeval.data.readers import require_text, require_texts

ROLES = {"user": "user", "human": "user", "assistant": "assistant", "ai": "assistant",
         "bot": "assistant", "model": "assistant", "tool": "tool"}
"""A message's role or ragas `type` → ours ("tool": retrieved material for the next reply)."""
CONTEXT_KEYS = ("contexts", "retrieval_context", "retrieved_contexts")
TRUTH_KEYS = ("ground_truth", "reference", "expected_output")
TOP_LEVEL_TURN_FIELDS = ("answer", "contexts")
"""Single-turn fields a conversation row must not hold beside its turns (which one is scored?)."""


TURN_MARK = "#turn"
"""A turn's own sample is named `<conversation id>#turn<n>` (localeval/conversation.py)."""


USER_MARK = "#user"
"""After a turn's id, the sample its faithfulness is checked again on against what the user
said (`<conversation id>#turn<n>#user`, localeval/conversation.py)."""


def turn_id(conversation_id: str, number: int) -> str:
    return f"{conversation_id}{TURN_MARK}{number}"


def conversation_of(sample_id: str) -> str:
    """The conversation a turn's sample id (or its USER_MARK sample's) belongs to; the id itself
    when it is no turn's."""
    head, mark, tail = sample_id.rpartition(TURN_MARK)
    return head if mark and tail.split("#")[0].isdigit() else sample_id


@dataclass(frozen=True)
class Turn:
    """One message of a conversation, as read: its 1-based number among the row's turns."""

    number: int
    role: str  # "user" or "assistant"
    content: str
    contexts: tuple[str, ...] | None = None
    ground_truth: str | None = None


def normalize(row: dict[str, Any]) -> dict[str, Any]:
    """The row with its conversation as `turns` (dicts, in order) and its conversation-level
    reference as `expected_outcome`; ValueError naming the first turn that cannot be used."""
    out = dict(row)
    if isinstance(out.get("question"), list):  # ragas: user_input (renamed) holds the messages
        if "turns" in out:
            raise ValueError("a conversation row has both 'turns' and a list 'user_input'; "
                             "keep one")
        out["turns"] = out.pop("question")
    for name in TOP_LEVEL_TURN_FIELDS:
        if out.get(name) not in (None, "", []):
            raise ValueError(f"a conversation row holds its {name} in its turns; drop the "
                             f"top-level {name!r} (or the 'turns')")
    if isinstance(out.get("question"), str):
        raise ValueError("a conversation row holds its questions in its turns; drop the "
                         "top-level 'question'")
    out.pop("question", None)
    # ragas' `reference` (renamed ground_truth) is the conversation's expected outcome
    reference = out.pop("ground_truth", None)
    require_text(reference, "field 'reference'")
    if reference is not None:
        out.setdefault("expected_outcome", reference)
    require_text(out.get("expected_outcome"), "field 'expected_outcome'")
    out["turns"] = [_as_dict(t) for t in read_turns(out["turns"])]
    return out


def read_turns(raw: Any) -> list[Turn]:
    """The turns of a raw `turns` value (any of the three shapes); a tool message becomes the
    contexts of the assistant turn after it."""
    if not isinstance(raw, list):
        raise ValueError(f"field 'turns' must be a list of messages, got {type(raw).__name__}")
    turns: list[Turn] = []
    retrieved: list[str] = []  # tool messages waiting for their assistant turn
    for i, message in enumerate(raw):
        where = f"turn {i + 1} (turns[{i}])"
        if not isinstance(message, Mapping):
            raise ValueError(f"{where}: must be an object {{role, content}}, got "
                             f"{type(message).__name__}")
        role_value = message.get("role", message.get("type"))
        role = ROLES.get(role_value.strip().lower()) if isinstance(role_value, str) else None
        if role is None:
            raise ValueError(f"{where}: role must be 'user' or 'assistant' (ragas: 'human', "
                             f"'ai', 'tool'), got {role_value!r}")
        content = message.get("content")
        if not isinstance(content, str):
            raise ValueError(f"{where}: content must be a string, got "
                             f"{type(content).__name__}")
        if role == "tool":
            retrieved.append(content)
            continue
        contexts = _contexts(message, where)
        truth = _truth(message, where)
        if role == "user":
            if contexts is not None or truth is not None:
                raise ValueError(f"{where}: a user turn has no contexts or ground_truth (they "
                                 "belong to the assistant turn that answers it)")
            if retrieved:
                raise ValueError(f"{where}: a tool message must come before the assistant "
                                 "turn it was retrieved for, not before a user turn")
        elif retrieved:
            contexts = (*(contexts or ()), *retrieved)
            retrieved = []
        turns.append(Turn(len(turns) + 1, role, content, contexts, truth))
    if retrieved:
        raise ValueError("the last message is a tool message: no assistant turn uses it")
    if not any(t.role == "assistant" for t in turns):
        raise ValueError("a conversation needs at least one assistant turn to score")
    if not any(t.role == "user" for t in turns):
        raise ValueError("a conversation needs at least one user turn")
    return turns


def _contexts(message: Mapping[str, Any], where: str) -> tuple[str, ...] | None:
    for key in CONTEXT_KEYS:
        value = message.get(key)
        if value is None:
            continue
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise ValueError(f"{where}: {key} must be a list of strings, got "
                             f"{type(value).__name__}")
        require_texts(value, f"{where}: {key}")
        return tuple(value)
    return None


def _truth(message: Mapping[str, Any], where: str) -> str | None:
    for key in TRUTH_KEYS:
        value = message.get(key)
        if value is None:
            continue
        require_text(value, f"{where}: {key}")
        return value
    return None


def _as_dict(turn: Turn) -> dict[str, Any]:
    out: dict[str, Any] = {"role": turn.role, "content": turn.content}
    if turn.contexts is not None:
        out["contexts"] = list(turn.contexts)
    if turn.ground_truth is not None:
        out["ground_truth"] = turn.ground_truth
    return out


def turns_of(value: Sequence[Mapping[str, Any]]) -> list[Turn]:
    """A sample's stored `turns` (already normalized) as Turn records."""
    return [Turn(i, t["role"], t["content"],
                 tuple(t["contexts"]) if t.get("contexts") is not None else None,
                 t.get("ground_truth")) for i, t in enumerate(value, start=1)]


def covers(turns: Sequence[Turn], field: str) -> bool:
    """Whether some assistant turn's own sample has `field` (what a conversation feeds: a
    metric needing `contexts` applies when one turn has them)."""
    for k, t in enumerate(turns):
        if t.role != "assistant":
            continue
        if field == "answer" and t.content.strip():
            return True
        if field == "question" and any(u.role == "user" for u in turns[:k]):
            return True
        if field == "contexts" and any(c.strip() for c in t.contexts or ()):
            return True
        if field == "ground_truth" and (t.ground_truth or "").strip():
            return True
        if field == "history" and k > 0:
            return True
    return False


ROLE_NAMES = {"en": {"user": "User", "assistant": "Assistant"},
              "zh": {"user": "用户", "assistant": "助手"}}


def transcript(turns: Sequence[Turn], language: str) -> str:
    """The turns as a chat transcript, one "User: ..." / "Assistant: ..." block each."""
    names = ROLE_NAMES.get(language, ROLE_NAMES["en"])
    sep = "：" if language == "zh" else ": "
    return "\n".join(f"{names[t.role]}{sep}{t.content}" for t in turns)
