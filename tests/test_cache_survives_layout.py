"""A judge answer cache filled before the layout change (issue 20) serves a run after it with 0
judge calls: the cache keys (model fingerprint, sampling, answer schema with its model names,
rendered template bytes, probes) did not move when the modules did.

tests/golden/cache_layout.json holds every (key → reply) that runs of every metric over a few
fixed rows (en and zh; answer, context, retrieval and reference columns; a context long enough
to be narrowed to passages) put into the cache, with the default settings and with the other
claim and passage settings (VARIANTS). The answers and scores were made from the code at
22c0345 (main before the verdict styles and contrast twins were retired and metrics/claims/
was laid out as one flow, issue 28 step 1; its default keys are those of dd79f9b, before the
move of issue 20): `git archive 22c0345`, then `PYTHONPATH=<that tree> python
tests/test_cache_survives_layout.py WRITE`. `prompts` (the template files' sha256, not part of
any key) were then taken from the code after that step, whose templates lost their retired
branches but render the same bytes. The `statements` variant was then made again from the
code of issue 29 item 4 (a statement that leaves out part of its sentence is replaced by the
sentence): its 11 statement requests kept their keys and answers, 78 of its 89 keys are those
of 22c0345, and the verdict requests of the replaced statements are new. answer_relevance's
questions request probes its clear flags since issue 32 round 11 (their P breaks ties): those
6 keys per variant were written again, every other key and every score stayed. Issue 41
(no rule raises a score) moved every key on purpose: every metric template fences its
material as data (one added line), the faithfulness and context_recall verdict templates ask
whether a question asserts a fact, and a narrowed context's passages carry their frame; all
three variants were written again (`python tests/test_cache_survives_layout.py WRITE`), with
every score the same as before. Issue 41 item 12 moved answer_relevance's parts keys (the
judge writes how many things the question asks for before the parts): those 6 keys per variant
were written again, every other key and every score stayed. Issue 54 item 4 renamed score keys
(`.soft` → `.weighted`, a rubric's `.raw` → `.greedy`, answer_similarity.raw → .cosine) and added
the explicit twins (`faithfulness.greedy` …): only `scores` was rewritten, each old value under
its new name and each twin equal to the score it doubles; no key and no answer moved. Issue 54
item 3 moved refusal's keys (the verdict asked without a reason, the reason in a second request
after it): `WRITE` (through the fixture's own metrics) replaced its 6 answers per variant by 12,
every other key and every score stayed. rerank_relevancy then probed its rating (its
`.weighted`, issue 54 item 4): its 9 keys per variant were written again and its `.greedy` /
`.weighted` keys added, every other key and every score stayed. The judge is
SchemaJudge: it answers any request with the smallest JSON its schema allows (a fixed shape, so
the multi-step metrics reach every step). The test loads those answers into a fresh cache and runs
the same rows with a judge that fails on any call: every key must be found."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).resolve().parent / "golden" / "cache_layout.json"
# Scores that come from embeddings (answer_similarity, ...) are sums of float32 products whose
# last bits differ between BLAS kernels (an AVX-512 host, OPENBLAS_CORETYPE=Haswell): the same
# score on another machine is the same to 1e-6, not to the bit.
FLOAT_REL, FLOAT_ABS = 1e-6, 1e-9

ROWS = [
    {"id": "en1", "question": "When was the Eiffel Tower built?",
     "answer": "The Eiffel Tower was built in 1889. It is in Paris.",
     "contexts": ["The Eiffel Tower was completed in 1889 for the World's Fair.",
                  "Paris is the capital of France."],
     "ground_truth": "It was built between 1887 and 1889.",
     "retrieved_ids": ["d1", "d2", "d3"], "expected_ids": ["d2"]},
    {"id": "zh1", "question": "长城有多长?",
     "answer": "长城全长约两万一千公里。它位于中国北方。",
     "contexts": ["长城是中国古代的军事防御工程,总长度约为21196公里。", "北京是中国的首都。"],
     "ground_truth": "长城总长约21196公里。",
     "retrieved_ids": ["a", "b"], "expected_ids": ["b", "c"]},
    {"id": "en3", "question": "How tall is the tower, and who built it?",
     "answer": "The tower is taller than the church. Gustave Eiffel finished it in 1889.",
     "contexts": ["The tower is taller than the church. Work began in 1887 and Gustave Eiffel "
                  "finished it in 1889.", "Maurice Koechlin designed the tower."],
     "ground_truth": "It is 300 metres tall; Eiffel's company built it."},
    {"id": "zh2", "question": "塔有多高?",
     "answer": "这座塔高300米。它于1889年建成。",
     "contexts": ["这座塔高300米,比教堂高。它于1887年开工,1889年建成。"],
     "ground_truth": "塔高300米。"},
    {"id": "en2", "question": "What does a refusal look like?",
     "answer": "I cannot help with that request.",
     "contexts": ["Refusals decline to answer."]},
    {"id": "en4", "question": "What did the survey of the river find?",
     "answer": "The survey counted 41 otters. Most lived near Weir 7.",
     # a context over 350 words: each claim is judged against its passages (claims/evidence.py)
     "contexts": [" ".join(f"Station {i} on the river recorded {i + 3} herons, {2 * i} ducks and "
                           f"a water temperature of {10 + i % 7} degrees." for i in range(30))
                  + " The survey counted 41 otters, most of them near Weir 7."],
     "ground_truth": "41 otters were counted."},
]


def _resolve(schema: dict[str, Any], root: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        schema = {**root["$defs"][name], **{k: v for k, v in schema.items() if k != "$ref"}}
    return schema


def instance(schema: dict[str, Any], root: dict[str, Any]) -> Any:
    """The smallest value of a JSON schema (last choice of each enum, first of each anyOf)."""
    schema = _resolve(schema, root)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:  # the last: a verdict 1 (supported)
        return schema["enum"][-1]
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            return instance(schema[key][0], root)
    kind = schema.get("type", "object")
    if isinstance(kind, list):
        kind = kind[0]
    if kind == "object":
        props = schema.get("properties", {})
        return {k: instance(v, root) for k, v in props.items()}
    if kind == "array":
        n = max(1, schema.get("minItems", 1))
        if "maxItems" in schema:
            n = min(n, schema["maxItems"])
        if "prefixItems" in schema:
            return [instance(s, root) for s in schema["prefixItems"]]
        return [instance(schema.get("items", {}), root) for _ in range(n)]
    if kind == "string":
        return "x" * max(1, schema.get("minLength", 1))
    if kind in ("integer", "number"):
        return schema.get("minimum", 1)
    if kind == "boolean":
        return True
    return None


class SchemaJudge:
    """Answers each request with a small JSON its answer schema allows (`instance`)."""

    name = "schema"
    fingerprint = "schema-judge"

    def __init__(self) -> None:
        self.calls = 0

    def sampling_key(self) -> str:
        return "schema"

    async def complete(self, request: Any) -> Any:
        from localeval.judge.interface import FieldProbs, JudgeReply

        self.calls += 1
        if request.continuations:
            n = len(request.continuations)
            return JudgeReply(text="", finish_reason="stop",
                              choice_probs={c: 1 / n for c in request.continuations})
        schema = json.loads(request.answer_schema)
        answer = instance(schema, schema)
        probs: list[FieldProbs] = []

        def probe(value: Any) -> None:  # one entry per probed value, in the answer's order
            if isinstance(value, dict):
                for k, v in value.items():
                    if k in request.probe_fields:
                        probs.append(FieldProbs(field=k, probs={"1": 0.75, "0": 0.25}))
                    probe(v)
            elif isinstance(value, list):
                for v in value:
                    probe(v)

        probe(answer)
        text = json.dumps(answer, ensure_ascii=False)
        return JudgeReply(text=text, finish_reason="stop", field_probs=probs)

    def close(self) -> None:
        pass


class NoCallJudge(SchemaJudge):
    """The same fingerprint and sampling key, but every call is a failure of the test."""

    async def complete(self, request: Any) -> Any:
        raise AssertionError(f"judge called for step {request.step}: its cache key changed")


VARIANTS: dict[str, dict[str, Any]] = {
    "default": {},
    # answer_relevance's sentence step and context_relevance's answer direction are off by
    # default since issue 32 round 10: this variant still asks them, with the keys they had
    "statements": {"claims": "statements", "explain": False,
                   "metric_options": {"answer_relevance": {"focus": True},
                                      "context_relevance": {"answer_supported": True}}},
    "whole-contexts": {"evidence_passages": False, "support_threshold": 0.5},
}


def fixture_metrics() -> list[str]:
    """The metrics the fixture was made with (those its scores name), in registry order: a
    metric added since has no keys from before to keep (its own test and golden prompts cover
    it), so adding one touches nothing here."""
    from localeval.metrics import REGISTRY
    from localeval.names import owner_of

    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    named = {owner_of(k) for v in golden.values() for s in v["scores"].values() for k in s}
    return [m for m in REGISTRY if m in named]


def _run(judge: Any, cache: Path, settings: dict[str, Any],
         metrics: list[str] | None = None) -> Any:
    """The fixture's rows through `metrics` (default: every registered one, as when writing)."""
    import localeval

    try:
        from localeval.models.embed import HashEmbedder
    except ImportError:  # the code before the move (writing the fixture)
        from localeval.embed import HashEmbedder  # type: ignore[no-redef]
    from localeval.metrics import REGISTRY

    return localeval.evaluate(ROWS, metrics=metrics or list(REGISTRY), judge=judge,
                              embedder=HashEmbedder(), cache=cache, **settings)


def _answers(cache: Path) -> dict[str, str]:
    import sqlite3

    with sqlite3.connect(cache) as db:
        return dict(db.execute("SELECT key, reply FROM answers ORDER BY key"))


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_cache_filled_before_the_move_serves_the_run_after_it(variant: str, tmp_path: Path) -> None:
    from localeval.judge.cache import AnswerCache
    from localeval.judge.interface import JudgeReply

    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))[variant]
    cache_file = tmp_path / "answers.sqlite"
    cache = AnswerCache(cache_file)
    for key, reply in golden["answers"].items():
        cache.put(key, JudgeReply.model_validate_json(reply))
    cache.close()
    results = _run(NoCallJudge(), cache_file, VARIANTS[variant], fixture_metrics())
    assert results.judge_calls == 0
    assert results.summary["judge"]["cached"] == len(golden["answers"])
    assert results.summary["prompts"] == golden["prompts"]
    assert results.errors == []
    scores = json.loads(json.dumps({r.id: r.scores for r in results.records}))
    assert scores.keys() == golden["scores"].keys()
    for sample, want in golden["scores"].items():
        assert scores[sample] == pytest.approx(want, rel=FLOAT_REL, abs=FLOAT_ABS), sample


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_the_same_keys_are_computed_after_the_move(variant: str, tmp_path: Path) -> None:
    judge = SchemaJudge()
    results = _run(judge, tmp_path / "answers.sqlite", VARIANTS[variant], fixture_metrics())
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))[variant]
    assert sorted(_answers(tmp_path / "answers.sqlite")) == sorted(golden["answers"])
    assert results.errors == []
    assert judge.calls == len(golden["answers"])


def test_the_engines_part_of_every_key_did_not_move_with_its_module() -> None:
    """The llama.cpp judge's sampling key enters every cache key; it moved from the retired
    judge backend module to the engine's (issue 31), then with the engine into judge/llamacpp/
    (issue 42), and is the same string. It changed once on purpose: since the prompt's last
    chunk is read in one call with a planned answer's first stretch ("read-with-prompt"), the
    judge's floats differ in their last bits from the answers cached before."""
    from localeval.judge.llamacpp import LazyJudge, sampling_key

    expected = ("temperature=0.0;seed=0;greedy;cuts=64/512;kv=per-sequence;"
                "planned=read-with-prompt")
    assert sampling_key(0.0, 0, 512, 64) == expected
    assert LazyJudge(Path("m.gguf"), "sha", parallel=1).sampling_key() == expected


def test_the_fixture_asks_every_template() -> None:
    """Between them the variants reach every judge step of every metric the fixture was made
    with, in both languages, and those are every metric of the layout change (issue 20)."""
    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))
    steps = {s for v in golden.values() for s in v["steps"]}
    from localeval.metrics import REGISTRY

    assert steps == {s for m in fixture_metrics() for s in REGISTRY[m].steps}
    assert {"faithfulness", "answer_correctness", "refusal", "ndcg"} <= set(fixture_metrics())


def write(folder: Path) -> None:
    """Write the fixture again, through the metrics it was made with (a first fixture: every
    registered one)."""
    metrics = fixture_metrics() if GOLDEN.is_file() else None
    golden = {}
    for variant, settings in VARIANTS.items():
        cache = folder / f"{variant}.sqlite"
        results = _run(SchemaJudge(), cache, settings, metrics)
        assert results.errors == [], results.errors
        golden[variant] = {
            "answers": _answers(cache),
            "prompts": results.summary["prompts"],
            "scores": {r.id: r.scores for r in results.records},
            "steps": sorted(results.summary["judge"]["calls_by_step"]),
        }
        print(f"{variant}: {len(golden[variant]['answers'])} answers")
    GOLDEN.write_text(json.dumps(golden, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                      encoding="utf-8")


if __name__ == "__main__":
    if sys.argv[1:] != ["WRITE"]:
        sys.exit("usage: python tests/test_cache_survives_layout.py WRITE")
    import os
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("LOCALEVAL_CACHE_DIR", tmp)
        os.environ.setdefault("LOCALEVAL_ALLOW_FAKE_JUDGE", "1")
        write(Path(tmp))
