"""Real models: every output schema yields a valid grammar and a parseable answer on the 0.5B
judge; a clear-cut faithfulness case on the 1.5B judge; the embedder end to end."""

from __future__ import annotations

import asyncio
import inspect
import json

import pytest
from pydantic import BaseModel

from localeval.config import Settings
from localeval.judge import schemas
from localeval.judge.client import JudgeClient
from localeval.judge.interface import JudgeRequest
from localeval.runner import run
from tests.conftest import OpenJudge


def all_output_schemas() -> list[type[BaseModel]]:
    """Every pydantic model in localeval.judge.schemas, plus the per-request factories (n = 2)."""
    found: list[type[BaseModel]] = []
    for _, obj in inspect.getmembers(schemas):
        if (
            inspect.isclass(obj)
            and issubclass(obj, BaseModel)
            and obj.__module__ == schemas.__name__
        ):
            found.append(obj)
        elif callable(obj) and hasattr(obj, "cache_info"):  # lru_cached factories: f(n, ...)
            try:
                model = obj(2)
            except TypeError:
                continue
            if inspect.isclass(model) and issubclass(model, BaseModel):
                found.append(model)
    return found


@pytest.mark.model
@pytest.mark.parametrize("schema", all_output_schemas(), ids=lambda s: s.__name__)
def test_every_schema_compiles_and_parses_on_the_tiny_model(
    tiny_judge, schema: type[BaseModel]
) -> None:  # type: ignore[no-untyped-def]
    request = JudgeRequest(
        step="schema-check",
        answer_schema=schemas.schema_json(schema),
        max_tokens=400,
        messages=[
            {"role": "system", "content": "Answer in JSON."},
            {
                "role": "user",
                "content": "Context: Paris is the capital of France. Answer with "
                f"JSON for this schema: {schemas.schema_json(schema)}",
            },
        ],
    )
    client = JudgeClient(tiny_judge)
    parsed = asyncio.run(client.ask(request, schema))
    assert isinstance(parsed, schema)


def qa(rid: str, answer: str, context: str, question: str = "q?") -> dict[str, object]:
    return {"id": rid, "question": question, "answer": answer, "contexts": [context]}


@pytest.mark.model
def test_tiny_model_run_is_deterministic_and_cached(tmp_path) -> None:  # type: ignore[no-untyped-def]
    row = qa("d", "Paris is the capital.", "Paris is the capital and largest city of France.",
             question="What is the capital of France?")
    settings = Settings(
        profile="tiny", metrics=["faithfulness"], cache=tmp_path / "c.sqlite", n_ctx=2048
    )
    first = run([row], tmp_path / "a", settings)
    second = run([row], tmp_path / "b", settings)
    assert first.summary["judge"]["calls"] >= 1
    assert second.summary["judge"]["calls"] == 0 and second.summary["judge"]["cached"] >= 1
    a = (tmp_path / "a" / "results.jsonl").read_text()
    assert a == (tmp_path / "b" / "results.jsonl").read_text()
    no_cache = run([row], None, settings.model_copy(update={"no_cache": True}))
    assert no_cache.records[0].model_dump() == first.records[0].model_dump()


@pytest.mark.model
def test_context_longer_than_the_window_is_split_and_scored(tmp_path) -> None:  # type: ignore[no-untyped-def]
    long_row = qa("long", "Paris is the capital of France.", "word " * 3000)
    ok_row = qa("ok", "Paris is the capital of France.", "Paris is the capital of France.")
    settings = Settings(
        profile="tiny", metrics=["faithfulness"], no_cache=True, n_ctx=1024, max_tokens=200
    )
    outcome = run([long_row, ok_row], None, settings)
    long_rec, ok_rec = outcome.records
    # the context does not fit the window: it is split into pieces and judged piece by piece
    assert long_rec.errors == {} and ok_rec.errors == {}
    for rec in (long_rec, ok_rec):
        score = rec.scores["faithfulness"]
        assert isinstance(score, float) and 0.0 <= score <= 1.0, rec.details
    # each verdict names the piece of the split context that decided it (None: no piece did)
    long_verdicts = long_rec.details["faithfulness"]["statements"]
    assert long_verdicts and all("piece" in v for v in long_verdicts), long_verdicts
    assert all("piece" not in v for v in ok_rec.details["faithfulness"]["statements"])


@pytest.mark.model_small
def test_small_model_gives_zero_to_a_statement_absent_from_the_context(small_judge) -> None:  # type: ignore[no-untyped-def]
    context = ["The Great Wall of China is built of stone, brick, tamped earth and wood."]
    rows = [
        {
            "id": "absent",
            "question": "What is the Great Wall of China made of?",
            "answer": "The Great Wall of China is made of chocolate.",
            "contexts": context,
        },
        {
            "id": "present",
            "question": "What is the Great Wall of China made of?",
            "answer": "The Great Wall of China is built of stone and brick.",
            "contexts": context,
        },
    ]
    outcome = run(rows, None, Settings(metrics=["faithfulness"], no_cache=True),
                  judge=OpenJudge(small_judge))  # left open: later tests use the session judge
    absent, present = outcome.records
    why = json.dumps([r.details for r in outcome.records], ensure_ascii=False)
    chocolate = [
        s
        for s in absent.details["faithfulness"]["statements"]
        if "chocolate" in s["statement"].lower()
    ]
    assert chocolate and all(s["verdict"] == 0 for s in chocolate), why
    assert absent.scores["faithfulness"] == 0.0, why
    assert present.scores["faithfulness"] == 1.0, why


@pytest.mark.embedder
def test_answer_similarity_with_the_real_embedder(small_embedder) -> None:  # type: ignore[no-untyped-def]
    rows = [
        {"id": "same", "answer": "巴黎是法国的首都。", "ground_truth": "法国的首都是巴黎。"},
        {"id": "other", "answer": "巴黎是法国的首都。", "ground_truth": "光合作用需要阳光和水。"},
    ]
    outcome = run(
        rows, None, Settings(metrics=["answer_similarity"], no_cache=True), embedder=small_embedder
    )
    same, other = (r.scores["answer_similarity"] for r in outcome.records)
    # the reordered sentence keeps 5 of its 7 character bigrams (0.71); the unrelated one
    # shares none and gets at most a quarter of its rescaled cosine
    assert 0.0 <= other <= 0.25 and 0.7 < same <= 1.0


def test_loading_the_embedder_prints_no_progress_bar_of_its_own(capfd) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("sentence_transformers")
    from localeval import models
    from localeval.models.embed import SentenceTransformerEmbedder
    from localeval.models.manifest import load_manifest

    manifest = load_manifest()
    spec = manifest.get(manifest.profile("small")["embedder"])
    if not spec.path().exists():
        pytest.skip("the small profile's embedder is not fetched")
    SentenceTransformerEmbedder(spec.path(), models.expected_sha256(spec))
    assert "Loading weights" not in capfd.readouterr().err  # --quiet means quiet
