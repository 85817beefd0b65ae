"""scripts/bench/conversation_cost.py, without a model: the independent rows it writes for a
conversation's assistant turns, and its per-conversation figures from two estimates."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "bench" / "conversation_cost.py"
CHAT = {"id": "c1", "turns": [
    {"role": "user", "content": "I am vegetarian. Which sauce is quick?"},
    {"role": "assistant", "content": "Tomato and basil.", "contexts": ["Tomato sauce: 10 min."]},
    {"role": "user", "content": "What can I add to it?"},
    {"role": "assistant", "content": "Garlic.", "ground_truth": "Garlic or olives."}]}


@pytest.fixture(scope="module")
def script() -> Any:
    spec = importlib.util.spec_from_file_location("conversation_cost", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["conversation_cost"] = module
    spec.loader.exec_module(module)
    return module


def test_each_assistant_turn_becomes_a_row_with_its_message_as_asked(script: Any) -> None:
    assert script.independent_turns(CHAT) == [
        {"id": "c1-turn2", "question": "I am vegetarian. Which sauce is quick?",
         "answer": "Tomato and basil.", "contexts": ["Tomato sauce: 10 min."]},
        {"id": "c1-turn4", "question": "What can I add to it?", "answer": "Garlic.",
         "ground_truth": "Garlic or olives."}]


def test_the_figures_are_per_conversation_and_their_ratio(script: Any, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict[str, list[dict[str, Any]]] = {}

    def estimate(path: Path, extra: list[str]) -> dict[str, Any]:
        items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        seen[path.name] = items
        chat = "turns" in items[0]
        total = {"requests": 9 if chat else 6, "prompt_tokens": 300 if chat else 200,
                 "prompt_tokens_processed": 100, "generated_tokens": 30, "count": "exact"}
        return {"metrics": ["faithfulness"], "total": total,
                "steps": {"faithfulness_verdicts": {"requests": total["requests"]}}}

    monkeypatch.setattr(script, "estimate", estimate)
    result = script.cost([CHAT, CHAT | {"id": "c2"}], tmp_path, "g", [])
    assert len(seen["g-conversation.jsonl"]) == 2 and len(seen["g-independent.jsonl"]) == 4
    assert result["independent_rows"] == 4
    assert result["conversation"]["per_conversation"]["requests"] == 4.5
    assert result["independent"]["per_conversation"]["prompt_tokens"] == 100
    assert result["ratio"]["requests"] == 1.5 and result["ratio"]["generated_tokens"] == 1.0
