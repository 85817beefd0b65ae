"""answer_similarity picks an embedder of the sample's language when the run's is monolingual."""

from __future__ import annotations

import asyncio
import time

import numpy as np
import pytest

from localeval.metrics import similarity
from localeval.models import embed
from localeval.models.embed import EmbeddingStore, HashEmbedder, store_for


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


# ---- the score: content overlap, or the cosine rescaled by the embedder's own baseline ------


def test_rescale_by_the_baseline() -> None:
    assert similarity.rescale(0.85, 0.7) == pytest.approx(0.5)
    assert similarity.rescale(1.0, 0.7) == pytest.approx(1.0)
    assert similarity.rescale(0.6, 0.7) == 0.0  # below unrelated texts: nothing
    assert similarity.blend(0.2, 0.9, 0.25) == pytest.approx(0.225)  # cosine: a quarter weight
    assert similarity.blend(0.6, 0.9, 0.25) == pytest.approx(0.6)  # shared content decides


def test_overlap_is_the_shorter_texts_share_of_content_terms() -> None:
    # ground truth terms: sunli, water, carbo, dioxi — all in the longer answer
    assert similarity.overlap("Plants need sunlight, water and carbon dioxide, and release "
                              "oxygen.", "Sunlight, water and carbon dioxide.") == 1.0
    # a wrong name and year: only "insulin" and "discovered" shared, of 6 answer terms
    assert similarity.overlap("Insulin was discovered by Marie Curie in 1935 in Paris.",
                              "Frederick Banting and Charles Best discovered insulin in 1921."
                              ) == pytest.approx(2 / 6)
    assert similarity.overlap("巴黎。", "举办地还没有确定。") == 0.0
    assert similarity.overlap("the", "a") == 0.0  # no content term: 0, not a division by 0


def test_baseline_is_the_mean_cosine_of_the_bundled_sentences_and_cached(
        monkeypatch: pytest.MonkeyPatch) -> None:
    from localeval.models.baseline_text import SENTENCES

    monkeypatch.setattr(embed, "_BASELINES", {})
    vecs = HashEmbedder().encode(list(SENTENCES["zh"])).astype(np.float64)
    sims = vecs @ vecs.T
    want = float(sims[np.triu_indices(len(vecs), 1)].mean())
    store = EmbeddingStore(HashEmbedder())
    assert asyncio.run(store.baseline("zh")) == pytest.approx(want, abs=1e-6)
    assert len(SENTENCES["zh"]) >= 40 and len(SENTENCES["en"]) >= 40

    class Counting(HashEmbedder):
        calls = 0

        def encode(self, texts: list[str]) -> np.ndarray:
            Counting.calls += 1
            return super().encode(texts)

    again = EmbeddingStore(Counting())  # same fingerprint: the cached value, no encoding
    assert asyncio.run(again.baseline("zh")) == asyncio.run(store.baseline("zh"))
    assert Counting.calls == 0
    assert asyncio.run(store.baseline("en")) != asyncio.run(store.baseline("zh"))


def test_answer_similarity_scores_raw_and_parts(english_companion: EmbeddingStore) -> None:
    from tests.test_metrics import EN, run

    rec, _ = run("answer_similarity", EN, {})
    d = rec.details["answer_similarity"]
    assert rec.scores["answer_similarity.cosine"] == pytest.approx(max(0.0, d["cosine"]))
    assert d["rescaled"] == pytest.approx(similarity.rescale(d["cosine"], d["baseline"]))
    assert d["overlap"] == pytest.approx(similarity.overlap(EN["answer"], EN["ground_truth"]))
    assert rec.scores["answer_similarity"] == pytest.approx(
        max(d["overlap"], similarity.COSINE_WEIGHT * d["rescaled"]))
    wrong = {**EN, "answer": "Bob started it in 1975 in Berlin."}
    worse, _ = run("answer_similarity", wrong, {})
    assert worse.scores["answer_similarity"] < rec.scores["answer_similarity"]


@pytest.mark.embedder
def test_the_bundled_example_separates_right_from_wrong(small_embedder) -> None:  # type: ignore[no-untyped-def]
    """Issue 19: with m3e-small every example row had 0.90–0.93, the wrong insulin answer 0.905."""
    import json

    from localeval.config import Settings
    from localeval.data.dataset import to_sample
    from localeval.executor import evaluate_sample
    from localeval.judge.client import JudgeClient
    from localeval.judge.fake import FakeJudge
    from localeval.metrics import resolve
    from localeval.models.backends import Backends
    from localeval.paths import package_data

    backends = Backends(judge=JudgeClient(FakeJudge({})),
                        embeddings=EmbeddingStore(small_embedder))
    rows = [json.loads(x) for x in
            (package_data("examples") / "example.jsonl").read_text("utf-8").splitlines() if x]
    got = {}
    for i, row in enumerate(rows, 1):
        rec = asyncio.run(evaluate_sample(to_sample(row, i), resolve(["answer_similarity"]),
                                          Settings(judge="fake"), backends))
        got[row["id"]] = rec.scores["answer_similarity"]
    assert got["en-insulin"] <= 0.5 and got["en-photosynthesis"] >= 0.8, got


@pytest.mark.embedder
def test_an_embedding_does_not_depend_on_its_batch(small_embedder) -> None:  # type: ignore[no-untyped-def]
    """Issue 29.4: the same sample gets the same answer_similarity bytes whatever else is in the
    dataset (batched, padding to a neighbour's length moved 19 of 60 dev answers by ~1e-7):
    a text alone, among the others and beside a long one has the same vector, byte for byte."""
    import json

    from localeval.config import Settings
    from localeval.data.dataset import to_sample
    from localeval.executor import evaluate_sample
    from localeval.judge.client import JudgeClient
    from localeval.judge.fake import FakeJudge
    from localeval.metrics import resolve
    from tests.conftest import shared_data

    lines = shared_data("dev/halueval_qa_dev.jsonl").read_text("utf-8").splitlines()[:10]
    rows = [json.loads(x) for x in lines]
    texts = [r[k] for r in rows for k in ("right_answer", "hallucinated_answer", "knowledge")]
    alone = [small_embedder.encode([t])[0] for t in texts[:8]]
    together = small_embedder.encode(texts[:8])
    mixed = small_embedder.encode([x for t in texts[:8] for x in (texts[-1], t)])[1::2]
    for i, vec in enumerate(alone):
        assert vec.tobytes() == together[i].tobytes() == mixed[i].tobytes(), texts[i]

    def scores(batch: list[dict]) -> dict[str, bytes]:
        from localeval.models.backends import Backends

        store = EmbeddingStore(small_embedder)
        store.prefetch((t for r in batch for t in (r["answer"], r["ground_truth"])),
                       background=False)  # the run's batched pass, neighbours and all
        backends = Backends(judge=JudgeClient(FakeJudge({})), embeddings=store)
        out = {}
        for i, row in enumerate(batch, 1):
            rec = asyncio.run(evaluate_sample(to_sample(row, i), resolve(["answer_similarity"]),
                                              Settings(judge="fake"), backends))
            out[row["id"]] = json.dumps(rec.scores).encode()
        return out

    samples = [{"id": f"r{i}", "question": r["question"], "answer": r["hallucinated_answer"],
                "ground_truth": r["right_answer"]} for i, r in enumerate(rows)]
    small, large = scores(samples[:4]), scores(samples[::-1])
    assert all(small[k] == large[k] for k in small)


class Counting(HashEmbedder):
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def encode(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return super().encode(texts)


def test_cosines_encode_the_texts_not_yet_met_in_one_call_and_equal_cosine() -> None:
    embedder = Counting()
    store = EmbeddingStore(embedder)
    others = ["a cat sat", "the dog ran", "a cat sat"]
    together = asyncio.run(store.cosines("a cat", others))
    assert embedder.calls == [["a cat", "a cat sat", "the dog ran"]]
    alone = [asyncio.run(EmbeddingStore(HashEmbedder()).cosine("a cat", o)) for o in others]
    assert together == alone and together[0] == together[2]


class Slow(HashEmbedder):
    def encode(self, texts: list[str]) -> np.ndarray:
        time.sleep(0.02)  # long enough that the second request waits on the lock
        return super().encode(texts)


def test_a_store_serves_a_second_event_loop() -> None:
    """A store outlives a run's event loop (the companion stores, two `localeval.evaluate`
    calls in one process): requests that wait on each other in a second loop still run."""
    store = EmbeddingStore(Slow())

    async def two(tag: str) -> list[np.ndarray]:
        return await asyncio.gather(store.vectors([f"a {tag}"]), store.vectors([f"b {tag}"]))

    asyncio.run(two("first"))
    second = asyncio.run(two("second"))
    assert [v.shape for v in second] == [(1, HashEmbedder().encode(["x"]).shape[1])] * 2
