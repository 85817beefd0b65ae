"""The judge engine on the 0.5B model: answers that do not depend on what else runs (batch
invariance), prefix reuse, probabilities, limits; and no model load with extra buffer types.
Scheduling details are tested without a model in test_engine_fake.py."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import pytest

from localeval.errors import JudgeError, PromptTooLong
from localeval.judge.interface import JudgeReply, JudgeRequest
from localeval.judge.schemas import Statements, schema_json, verdict_list

SYSTEM = "You are a careful evaluator. You answer with JSON only."
FACTS = [
    ("Who wrote Hamlet?", "Hamlet was written by William Shakespeare around 1600."),
    ("What is the capital of France?", "Paris is the capital of France and has the Eiffel Tower."),
    ("When did the Second World War end?", "It ended in 1945."),
    ("How tall is Mount Everest?", "Mount Everest is 8,849 metres tall and lies in Nepal."),
    ("What is H2O?", "H2O is water. It boils at 100 degrees Celsius at sea level."),
    ("Who painted the Mona Lisa?", "Leonardo da Vinci painted the Mona Lisa in Florence."),
]


GUIDE = ("Break the answer below into short atomic statements. Each statement holds one fact, "
         "names its subject instead of using a pronoun, and keeps the answer's own wording "
         "where it can. Do not add facts that the answer does not state, do not judge whether "
         "they are true, and do not repeat the question. Dates, numbers and places stay exactly "
         "as written. A sentence with two facts gives two statements.\n\n")


def _statements(q: str, a: str, max_tokens: int = 160) -> JudgeRequest:
    user = (f"{GUIDE}Question: {q}\nAnswer: {a}\n\n"
            "Reply as {\"statements\": [\"...\"]}.")
    return JudgeRequest(step="faithfulness_statements", sample_id=q, max_tokens=max_tokens,
                        answer_schema=schema_json(Statements),
                        messages=[{"role": "system", "content": SYSTEM},
                                  {"role": "user", "content": user}])


PACKAGE = Path(__file__).resolve().parents[1] / "localeval"


def test_no_model_load_enables_extra_buffer_types() -> None:
    """llama.cpp's extra buffer types (repacking, AMX) crash some hosts: nothing may turn them
    on, and nothing may load through the high-level Llama class (which turns them on)."""
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for m in re.finditer(r"use_extra_bufts\s*=\s*(\w+)", text):
            if m.group(1) != "False":
                offenders.append(f"{path.name}: {m.group(0)}")
        if re.search(r"\bLlama\(", text):
            offenders.append(f"{path.name}: Llama(")
    assert offenders == []


def test_model_params_never_enable_extra_buffer_types() -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    from localeval.judge.llamacpp.llama import model_params

    assert llama_cpp.llama_model_default_params().use_extra_bufts  # llama.cpp's own default
    for layers in (0, -1):
        assert model_params(llama_cpp, layers).use_extra_bufts is False


def test_default_parallel() -> None:
    from localeval.judge.llamacpp import default_parallel, resolve_parallel

    assert default_parallel(gpu_offload=False) == 4
    assert default_parallel(gpu_offload=True) == 8
    assert resolve_parallel(3) == 3


@pytest.fixture(scope="module")
def tiny_path() -> Path:
    pytest.importorskip("llama_cpp")
    from conftest import _need, model_path

    return _need(model_path("tiny"))


def _engine(path: Path, **kw: object):  # type: ignore[no-untyped-def]
    from localeval.judge.llamacpp import open_engine

    kw.setdefault("parallel", 4)
    return open_engine(path, "test", n_ctx=1024, **kw)  # type: ignore[arg-type]


async def _gather(judge, requests: list[JudgeRequest]) -> list[JudgeReply | BaseException]:  # type: ignore[no-untyped-def]
    return await asyncio.gather(*(judge.complete(r) for r in requests), return_exceptions=True)


def _verdicts(context: str, claims: list[str]) -> JudgeRequest:
    numbered = "\n".join(f"{i}. {c}" for i, c in enumerate(claims, 1))
    return JudgeRequest(step="faithfulness_verdicts", max_tokens=200, probe_fields=["verdict"],
                        answer_schema=schema_json(verdict_list(len(claims), True)),
                        messages=[{"role": "system", "content": SYSTEM},
                                  {"role": "user", "content": (
                                      f"Judge each statement against the context.\n\n"
                                      f"Context: {context}\n\nStatements:\n{numbered}")}])


@pytest.mark.model
def test_a_request_gets_the_same_answer_whatever_runs_beside_it(tiny_path: Path) -> None:
    requests = [_statements(q, a) for q, a in FACTS]
    requests += [_verdicts(a, [q.rstrip("?") + " is unknown.", a]) for q, a in FACTS[:3]]

    def answers(judge, batch: list[JudgeRequest]) -> list[tuple]:  # type: ignore[no-untyped-def]
        try:
            out = asyncio.run(_gather(judge, batch))
        finally:
            judge.close()
        assert all(isinstance(r, JudgeReply) for r in out), out
        return [(r.text, [(f.field, f.probs) for f in r.field_probs]) for r in out]  # type: ignore[union-attr]

    alone = [answers(_engine(tiny_path, parallel=1), [r])[0] for r in requests]
    together = answers(_engine(tiny_path, parallel=4), requests)
    backwards = answers(_engine(tiny_path, parallel=3), requests[::-1])[::-1]
    assert together == alone
    assert backwards == alone
    for text, probes in alone[len(FACTS):]:  # probabilities of each verdict digit
        assert len(probes) == 2
        assert all(set(p) <= {"0", "1"} and abs(sum(p.values()) - 1) < 0.01 for _, p in probes)
        assert [max(p, key=p.get) for _, p in probes] == [
            str(v["verdict"]) for v in json.loads(text)["verdicts"]]


@pytest.mark.model
def test_shared_prefixes_are_read_once(tiny_path: Path) -> None:
    requests = [_statements(q, a) for q, a in FACTS]
    judge = _engine(tiny_path, parallel=2)
    try:
        first = asyncio.run(_gather(judge, requests))
        second = asyncio.run(_gather(judge, requests))
    finally:
        judge.close()
    for reply in first:
        assert isinstance(reply, JudgeReply) and reply.finish_reason == "stop"
        Statements.model_validate_json(reply.text)  # the grammar forces the shape
    processed = sum(r.prompt_tokens_processed for r in first)  # type: ignore[union-attr]
    assert processed < sum(r.prompt_tokens for r in first)  # type: ignore[union-attr]
    assert sum(r.prompt_tokens_processed for r in second) < processed  # type: ignore[union-attr]
    assert [r.text for r in first] == [r.text for r in second]  # type: ignore[union-attr]


@pytest.mark.model
def test_continuation_probabilities_on_the_model(tiny_path: Path) -> None:
    ask = JudgeRequest(step="yes-no", answer_schema="{}", max_tokens=1,
                       continuations=["Yes", "No"],
                       messages=[{"role": "user", "content": "Is Paris the capital of France? "
                                                             "Answer Yes or No."}])
    judge = _engine(tiny_path, parallel=1)
    try:
        reply = asyncio.run(judge.complete(ask))
    finally:
        judge.close()
    assert set(reply.choice_probs) == {"Yes", "No"}
    assert sum(reply.choice_probs.values()) == pytest.approx(1.0)
    assert reply.choice_probs["Yes"] > 0.5


@pytest.mark.model
def test_limits_are_that_request_s_error_only(tiny_path: Path) -> None:
    judge = _engine(tiny_path, parallel=3)
    huge = _statements("Q?", "word " * 2000)
    short = _statements(*FACTS[0], max_tokens=5)
    verdicts = JudgeRequest(step="faithfulness_verdicts", max_tokens=200,
                            answer_schema=schema_json(verdict_list(2, True)),
                            messages=[{"role": "user", "content": (
                                "Context: Paris is in France.\n1. Paris is in France.\n"
                                "2. Paris is in Spain.\nJudge each.")}])
    try:
        out = asyncio.run(_gather(judge, [huge, short, verdicts, _statements(*FACTS[1])]))
    finally:
        judge.close()
    assert isinstance(out[0], PromptTooLong) and "context window" in str(out[0])
    assert isinstance(out[1], JudgeReply) and out[1].finish_reason == "length"
    assert out[1].completion_tokens == 5
    assert isinstance(out[2], JudgeReply) and len(json.loads(out[2].text)["verdicts"]) == 2
    assert isinstance(out[3], JudgeReply) and out[3].finish_reason == "stop"


@pytest.mark.model
def test_closed_engine_refuses_requests(tiny_path: Path) -> None:
    judge = _engine(tiny_path, parallel=2)
    judge.close()
    with pytest.raises(JudgeError, match="closed"):
        asyncio.run(judge.complete(_statements(*FACTS[0])))


@pytest.mark.model
def test_a_last_chunk_that_fills_the_batch_leaves_the_answer_its_own_call(
        tiny_path: Path) -> None:
    """The planned answer is read with the prompt's last chunk only where both fit in one
    batch: a prompt whose last chunk nearly filled it was an internal error."""
    from localeval.judge.llamacpp.chunks import cuts, last_chunk

    judge = _engine(tiny_path, parallel=1, max_chunk=64)
    piece = judge.backend.tokenizer.piece
    try:
        asked = []
        for n in range(40, 120):  # lengths whose last chunk leaves no room for the answer
            request = _verdicts("word " * n, ["A word is repeated."])
            tokens = judge.prompt_tokens(request.messages)
            if last_chunk(cuts(tokens, piece, max_chunk=64), len(tokens)) >= 60:
                asked.append(request)
        replies = asyncio.run(_gather(judge, asked[:3]))
    finally:
        judge.close()
    assert len(replies) == 3 and all(isinstance(r, JudgeReply) for r in replies), replies
