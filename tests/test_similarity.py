"""answer_similarity picks an embedder of the sample's language when the run's is monolingual."""

from __future__ import annotations

import asyncio

import numpy as np
import pytest

from localeval import embed
from localeval.embed import EmbeddingStore, HashEmbedder, store_for


class Named(HashEmbedder):
    def __init__(self, name: str) -> None:
        self.name = name


@pytest.fixture
def english_companion(monkeypatch: pytest.MonkeyPatch) -> EmbeddingStore:
    companion = EmbeddingStore(Named("all-minilm-l6-v2"))
    monkeypatch.setitem(embed._COMPANIONS, "en", companion)
    monkeypatch.setitem(embed._COMPANIONS, "zh", None)  # none present for Chinese
    return companion


def test_a_chinese_embedder_hands_english_rows_to_the_english_one(
        english_companion: EmbeddingStore) -> None:
    zh_store = EmbeddingStore(Named("m3e-small"))
    assert asyncio.run(store_for(zh_store, "en")) is english_companion
    assert asyncio.run(store_for(zh_store, "zh")) is zh_store


def test_multilingual_or_absent_companion_keeps_the_run_embedder(
        english_companion: EmbeddingStore) -> None:
    multi = EmbeddingStore(Named("bge-m3"))
    assert asyncio.run(store_for(multi, "en")) is multi
    en_store = EmbeddingStore(Named("all-minilm-l6-v2"))
    assert asyncio.run(store_for(en_store, "zh")) is en_store  # no Chinese one present


def test_answer_similarity_reports_the_embedder_used(english_companion: EmbeddingStore) -> None:
    from tests.test_metrics import EN, run

    rec, _ = run("answer_similarity", EN, {})
    details = rec.details["answer_similarity"]
    assert details["embedder"] == "hash-ngram-512"  # the fake run's own, multilingual
    va, vb = HashEmbedder().encode([EN["answer"], EN["ground_truth"]])
    assert details["cosine"] == pytest.approx(float(np.dot(va, vb)), abs=1e-6)
