"""A metric declares everything (`@metric`): the steps it renders are exactly the steps it
declares, names are unique, and what other code once listed by hand (the report order,
`run --estimate`'s step kinds, `compare`'s direction) follows from the declarations."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from localeval.metrics import REGISTRY, MetricContext, MetricResult
from localeval.metrics.base import metric
from tests.test_cache_survives_layout import ROWS, VARIANTS, SchemaJudge

CITING = [{"id": "cites", "question": "When was the tower built?",
           "answer": "It was built in 1889 [1].", "contexts": ["It was built in 1889."]}]
"""A row whose answer cites a passage (metrics/citations.py asks support only for a citation)."""
CONVERSATION = {"id": "chat", "turns": [
    {"role": "user", "content": "I am vegetarian. Who built the Eiffel Tower?"},
    {"role": "assistant", "content": "Gustave Eiffel's company built it.",
     "contexts": ["Gustave Eiffel's company built the tower in 1889."]},
    {"role": "user", "content": "How tall is it?"},
    {"role": "assistant", "content": "It is 330 metres tall.",
     "contexts": ["The tower is 330 metres tall."]}]}
"""A conversation (localeval/conversation.py): what the conversation metrics render on."""


def rendered_steps(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                   metrics: list[str]) -> tuple[dict[str, set[str]], list[Any]]:
    """metric → the steps it rendered over the layout fixture's rows in each of its settings
    variants (SchemaJudge's answers reach every step), and the runs' errors."""
    import localeval
    from localeval.models.embed import HashEmbedder

    seen: dict[str, set[str]] = defaultdict(set)
    by_steps = {REGISTRY[n].steps: n for n in metrics}
    request = MetricContext.request

    def spy(self: MetricContext, step: str, schema: Any, **variables: Any) -> Any:
        if self.steps in by_steps:  # the metric's own view (executor.evaluate_sample)
            seen[by_steps[self.steps]].add(step)
        return request(self, step, schema, **variables)

    monkeypatch.setattr(MetricContext, "request", spy)
    errors = []
    for i, settings in enumerate(VARIANTS.values()):
        results = localeval.evaluate([*ROWS, *CITING, CONVERSATION], metrics=metrics,
                                     judge=SchemaJudge(),
                                     embedder=HashEmbedder(), cache=tmp_path / f"{i}.sqlite",
                                     **settings)
        errors += results.errors
    return dict(seen), errors


def test_every_metric_renders_exactly_the_steps_it_declares(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    judged = [n for n, m in REGISTRY.items() if m.steps]
    # the spy tells metrics apart by their steps: those that declare the same steps (the
    # diagnosis metrics, which read one claim matrix) are run and checked one at a time
    by_steps: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for n in judged:
        by_steps[REGISTRY[n].steps].append(n)
    for k in range(max(len(names) for names in by_steps.values())):
        batch = [names[k] for names in by_steps.values() if k < len(names)]
        seen, errors = rendered_steps(monkeypatch, tmp_path / str(k), batch)
        assert errors == []
        for name in batch:
            assert seen.get(name, set()) == set(REGISTRY[name].steps), name


@pytest.fixture
def scratch_metrics() -> Any:
    """Metrics registered by a test are removed after it."""
    before = dict(REGISTRY)
    yield
    REGISTRY.clear()
    REGISTRY.update(before)


def test_a_step_rendered_but_not_declared_is_the_metrics_error(
        scratch_metrics: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from pydantic import BaseModel

    class Verdict(BaseModel):
        refused: int

    @metric("sneaky", requires=("question", "answer", "contexts"), steps=("refusal_verdict",),
            description="renders a step it does not declare")
    async def sneaky(sample: Any, ctx: MetricContext) -> MetricResult:
        await ctx.ask("refusal_verdict", Verdict, question=sample.question, answer=sample.answer)
        await ctx.ask("rerank_relevancy_rating", Verdict, question=sample.question,
                      context=sample.contexts[:1])
        return MetricResult(scores={"sneaky": 1.0})

    seen, errors = rendered_steps(monkeypatch, tmp_path, ["sneaky"])
    assert seen["sneaky"] != set(REGISTRY["sneaky"].steps)  # what the declarations test finds
    assert errors and all(m == "sneaky" and "'rerank_relevancy_rating'" in msg
                          and "does not declare" in msg for _, m, msg in errors)


def test_a_step_declared_but_never_rendered_is_found(
        scratch_metrics: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    @metric("idle", requires=("answer",), steps=("refusal_verdict",),
            description="declares a step it never renders")
    async def idle(sample: Any, ctx: MetricContext) -> MetricResult:
        return MetricResult(scores={"idle": 1.0})

    seen, errors = rendered_steps(monkeypatch, tmp_path, ["idle"])
    assert errors == [] and seen.get("idle", set()) != set(REGISTRY["idle"].steps)


def test_registering_a_name_twice_is_an_error(scratch_metrics: None) -> None:
    async def score(sample: Any, ctx: MetricContext) -> MetricResult:
        return MetricResult()

    with pytest.raises(ValueError, match="'faithfulness' is registered twice"):
        metric("faithfulness", requires=("answer",), description="again")(score)
    assert REGISTRY["faithfulness"].steps  # the first stays


def test_the_report_order_is_the_declared_order() -> None:
    orders = [m.order for m in REGISTRY.values()]
    assert orders == sorted(orders)
    assert list(REGISTRY)[:3] == ["faithfulness", "answer_relevance", "context_relevance"]


def test_estimate_step_kinds_follow_the_declarations() -> None:
    from localeval.estimate.sizing import STATEMENTS_STEP, claim_steps

    claims = claim_steps()
    assert claims == {s for m in REGISTRY.values() if STATEMENTS_STEP in m.steps
                      for s in m.steps if not s.endswith("_statements")}
    assert {"faithfulness_verdicts", "context_recall_verdicts", "answer_correctness_answer",
            "answer_correctness_reference"} <= claims
    assert not {"refusal_verdict", STATEMENTS_STEP} & claims


@pytest.mark.parametrize(("weights", "embedded"), [((1.0, 0.0), False), ((0.75, 0.25), True)])
def test_answer_correctness_loads_the_embedder_only_when_its_weights_use_it(
        tmp_path: Path, weights: tuple[float, float], embedded: bool) -> None:
    """Default weights never use the cosine: nothing is embedded, no embedder is loaded (with
    the shield's forms alone; its meaning head embeds every sentence: test_shield_meaning.py)."""
    import localeval
    from localeval.models.embed import HashEmbedder

    class Counting(HashEmbedder):
        texts = 0

        def encode(self, texts: list[str]) -> Any:
            Counting.texts += len(texts)
            return super().encode(texts)

    assert REGISTRY["answer_correctness"].uses_embedder  # it may, so `metrics` lists it
    results = localeval.evaluate(ROWS, ["answer_correctness"], judge=SchemaJudge(),
                                 embedder=Counting(), cache=tmp_path / "c.sqlite",
                                 correctness_weights=weights, shield="forms")
    assert results.errors == []
    assert (Counting.texts > 0) == embedded
    assert ("embedder" in results.summary["models"]) == embedded
    similarity = [r.details["answer_correctness"].get("similarity") for r in results.records
                  if "answer_correctness" in r.details]
    assert similarity and all((s is not None) == embedded for s in similarity)
