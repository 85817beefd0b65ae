"""A sample's texts are split into sentences once (text.sentences_of), whatever
number of support steps and metrics read them."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

import localeval
from localeval import text
from localeval.metrics import claims
from localeval.models.embed import HashEmbedder
from tests.test_cache_survives_layout import SchemaJudge

CLAIMS = Path(claims.__file__).parent
LONG = " ".join(f"Station {i} on the river recorded {i + 3} herons and {2 * i} ducks."
                for i in range(40)) + " The survey counted 41 otters near Weir 7."
ROW = {"id": "s", "question": "What did the survey find?",
       "answer": "The survey counted 41 otters. Most lived near Weir 7. Station 3 had herons.",
       "contexts": [LONG, "Otters are mammals. They swim."],
       "ground_truth": "It counted 41 otters. They lived near Weir 7."}


def test_each_text_of_a_sample_is_split_once(monkeypatch: pytest.MonkeyPatch,
                                             tmp_path: Path) -> None:
    calls: Counter[str] = Counter()
    real = text.split_sentences

    def counting(t: str) -> list[str]:
        calls[t] += 1
        return real(t)

    text.sentences_of.cache_clear()
    monkeypatch.setattr(text, "split_sentences", counting)
    results = localeval.evaluate(
        [ROW], metrics=["faithfulness", "context_recall", "answer_correctness",
                        "context_relevance"],
        judge=SchemaJudge(), embedder=HashEmbedder(), cache=tmp_path / "answers.sqlite")
    assert results.errors == [] and len(results.records[0].scores) > 4
    texts = [ROW["answer"], ROW["ground_truth"], *ROW["contexts"]]
    assert all(calls[t] == 1 for t in texts), {t[:30]: calls[t] for t in texts}
    assert max(calls.values()) == 1  # passages and pieces too


def test_no_support_step_splits_a_text_itself() -> None:
    for module in CLAIMS.glob("*.py"):
        assert "split_sentences(" not in module.read_text(encoding="utf-8"), module.name
