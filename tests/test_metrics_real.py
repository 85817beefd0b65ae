"""Real-model checks: every output schema compiles to a grammar and generates (0.5B), and the
design documents' case runs through every metric on the 1.5B judge with Chinese templates.

Heavy: run them under the CPU lock, e.g.
    flock /tmp/localeval-cpu.lock .venv/bin/python -m pytest -m "model or model_small" \
        tests/test_metrics_real.py
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from pydantic import BaseModel

from localeval.judge.schemas import ALL_SCHEMAS, schema_json
from localeval.models import models_dir

SEED = Path(__file__).resolve().parents[2] / "shared" / "data" / "seed_case.json"
TINY = "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf"
SMALL = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"


def _model(name: str) -> Path:
    pytest.importorskip("llama_cpp")
    path = models_dir() / name
    if not path.is_file():
        pytest.skip(f"{path} is absent (python -m localeval models pull)")
    return path


@pytest.fixture(scope="module")
def tiny_judge():  # type: ignore[no-untyped-def]
    from localeval.judge.llamacpp import open_engine

    judge = open_engine(_model(TINY), "test-tiny", parallel=1, n_ctx=2048)
    yield judge
    judge.close()


PROMPT = (
    "Reply in JSON with the requested fields. Keep every string under ten words and every "
    "list to at most two items. Text: Ada founded Acme in Paris in 1990."
)


@pytest.mark.model
@pytest.mark.parametrize("schema", ALL_SCHEMAS, ids=lambda s: s.__name__)
def test_schema_grammar_compiles_and_generates(tiny_judge, schema: type[BaseModel]) -> None:  # type: ignore[no-untyped-def]
    from localeval.judge.interface import JudgeRequest

    request = JudgeRequest(
        step="grammar-check",
        answer_schema=schema_json(schema),
        max_tokens=384,
        messages=[{"role": "user", "content": PROMPT}],
    )
    reply = asyncio.run(tiny_judge.complete(request))
    assert reply.finish_reason == "stop", reply.text
    schema.model_validate_json(reply.text)  # the grammar guarantees a valid answer


@pytest.mark.model_small
def test_seed_case_every_metric_scores_in_range_with_chinese_templates(tmp_path: Path) -> None:
    _model(SMALL)
    from localeval.config import Settings
    from localeval.metrics import REGISTRY
    from localeval.runner import run

    if not SEED.is_file():
        pytest.fail(f"{SEED} is missing: the repository's ../shared/data must be present")
    seed = json.loads(SEED.read_text(encoding="utf-8"))
    row = {k: seed[k] for k in ("id", "question", "answer", "contexts")}
    # The case has no ground truth; its answer, which the reference implementation found fully
    # supported by the contexts, stands in for one so that the reference-based metrics run.
    row["ground_truth"] = seed["answer"]
    names = [n for n, m in REGISTRY.items()  # a conversation metric needs turns: not this row
             if (m.uses_judge or m.uses_embedder) and "turns" not in m.requires]
    assert len(names) >= 9
    settings = Settings(profile="small", cache=tmp_path / "cache.sqlite", explain=False,
                        metrics=names)
    outcome = run([row], None, settings)
    record = outcome.records[0]
    print(json.dumps({"scores": record.scores, "details": record.details}, ensure_ascii=False))
    assert record.language == "zh"
    assert not record.errors, record.errors
    assert not record.skipped, record.skipped
    for name in names:  # a metric run only when named may be undefined here, with its reason
        if record.scores.get(name) is None and not REGISTRY[name].default:
            assert (record.details.get(name) or {}).get("unscored_reason"), name
            continue
        assert record.scores.get(name) is not None, (name, record.details.get(name))
    for key, value in record.scores.items():
        assert value is None or 0.0 <= value <= 1.0, (key, value)
    prompts = outcome.summary["prompts"]
    assert any(k.startswith("zh/") for k in prompts)
    # the reference implementation reported 1.0 here; a 1.5B judge should be close
    assert record.scores["faithfulness"] >= 0.6
    # the answer uses part of each context (the reference reported 0.55-0.75 for its share)
    assert 0.0 < record.scores["context_relevance"] < 1.0


@pytest.mark.model
def test_contexts_longer_than_the_window_are_split_on_the_real_judge(tmp_path: Path) -> None:
    _model(TINY)
    from localeval.config import Settings
    from localeval.runner import run

    facts = [f"Fact number {i}: the warehouse in city {i} stores {i * 7} crates of tea."
             for i in range(120)]
    row = {"id": "long", "question": "How many crates does the warehouse in city 3 store?",
           # not word for word in the contexts, so that the judge (not the quote rule) decides
           "answer": "City 3's warehouse holds 21 crates of tea.",
           "contexts": [" ".join(facts[:60]), " ".join(facts[60:])]}
    # the splitting path itself (with evidence passages on, this claim's passages fit at once)
    settings = Settings(profile="tiny", n_ctx=1024, max_tokens=256, explain=False,
                        metrics=["faithfulness"], cache=tmp_path / "cache.sqlite",
                        evidence_passages=False)
    record = run([row], None, settings).records[0]
    assert not record.errors, record.errors
    assert record.details["faithfulness"]["context_pieces"] >= 2
    passages = run([row], None, settings.model_copy(update={"evidence_passages": True}))
    focused = passages.records[0]
    assert not focused.errors, focused.errors
    assert all("evidence_passages" in s for s in focused.details["faithfulness"]["statements"])
    assert 0.0 <= record.scores["faithfulness"] <= 1.0
