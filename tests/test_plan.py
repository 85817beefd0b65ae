"""Answers fixed but for a few choices are read, not generated (judge/llamacpp/plan.py): the plan
of a schema, and the engine reading it over the fake llama.cpp backend of test_engine_fake."""

from __future__ import annotations

import json

import numpy as np

from localeval.judge.llamacpp.plan import Choice, Free, Reading, plan_for
from localeval.judge.schemas import checked_verdicts, question_list, statements_up_to
from tests.test_engine_fake import (
    END,
    FakeBackend,
    answer_for,
    engine,
    expected,
    request,
    run_all,
)

VERDICTS3 = json.dumps(checked_verdicts(3).model_json_schema())
DIGIT = json.dumps({"type": "object", "properties": {"v": {"enum": list(range(7))}},
                    "required": ["v"]})


def test_a_bare_verdict_list_is_literal_text_and_one_choice_per_item() -> None:
    parts = plan_for(VERDICTS3)
    choice = Choice("verdict", ("0", "1"))
    assert parts == ('{"verdicts": [{"verdict": ', choice, '}, {"verdict": ', choice,
                     '}, {"verdict": ', choice, "}]}")


def test_a_varying_length_or_a_pattern_has_no_plan() -> None:
    assert plan_for(json.dumps(statements_up_to(4).model_json_schema())) is None
    assert plan_for(json.dumps({"type": "object", "required": ["x"], "properties": {
        "x": {"type": "string", "pattern": "^a+$"}}})) is None
    assert plan_for("{}") is None


def test_free_text_is_a_free_part_between_literal_text_and_choices() -> None:
    parts = plan_for(json.dumps(question_list(2, True).model_json_schema()))
    assert parts is not None
    free_q, free_r = Free("question", 0, 300), Free("reason", 0, 200)
    clear = Choice("clear", ("0", "1"))
    assert parts == ('{"questions": [{"question": "', free_q, ', "reason": "', free_r,
                     ', "clear": ', clear, '}, {"question": "', free_q, ', "reason": "', free_r,
                     ', "clear": ', clear, "}]}")
    assert 'char{0,300} "\\""' in free_q.gbnf()


def test_a_choice_of_several_tokens_is_not_read() -> None:
    parts = plan_for(json.dumps({"type": "object", "required": ["x"], "properties": {
        "x": {"enum": ["yes", "no"]}}}))
    assert parts is not None
    assert Reading.start(parts, lambda text: list(text.encode())) is None


def test_a_planned_answer_equals_the_generated_one_with_no_token_generated() -> None:
    texts = [f"claim {i} about the river" for i in range(5)]
    generated_engine = engine(FakeBackend(), parallel=2)
    planned_backend = FakeBackend()
    planned_engine = engine(planned_backend, parallel=2)
    try:
        generated = run_all(generated_engine, [request(t, probe_fields=["v"]) for t in texts])
        planned = run_all(planned_engine, [request(t, probe_fields=["v"]).model_copy(
            update={"answer_schema": DIGIT}) for t in texts])
    finally:
        generated_engine.close()
        planned_engine.close()
    for g, p, t in zip(generated, planned, texts, strict=True):
        assert p.text == g.text == expected(t)  # type: ignore[union-attr]
        assert p.completion_tokens == 0 and p.forced_tokens > 0  # type: ignore[union-attr]
        best = json.loads(p.text)["v"]  # type: ignore[union-attr]
        probs = p.field_probs[0].probs  # type: ignore[union-attr]
        assert max(probs, key=probs.__getitem__) == str(best)
        assert probs[str(best)] > 0.5


class AlternatingBackend(FakeBackend):
    """A judge that answers verdict i with i % 2: the guess (1) is wrong at every even item."""

    def _logits(self, history: list[int]) -> np.ndarray:
        logits = np.zeros(256, dtype=np.float32)
        made = bytes(history[history.index(END) + 1:]).decode()
        item = made.count('"verdict": ') - 1
        logits[ord(str(item % 2))] = 5.0
        logits[ord(str(1 - item % 2))] = 4.0
        return logits


def test_a_wrong_guess_cuts_the_answer_back_and_reads_the_rest_again() -> None:
    backend = AlternatingBackend()
    judge = engine(backend, parallel=1, chunk=64)
    try:
        reply = run_all(judge, [request("three claims").model_copy(
            update={"answer_schema": VERDICTS3, "probe_fields": ["verdict"]})])[0]
    finally:
        judge.close()
    assert reply.text == '{"verdicts": [{"verdict": 0}, {"verdict": 1}, {"verdict": 0}]}'  # type: ignore[union-attr]
    p = [fp.probs["1"] for fp in reply.field_probs]  # type: ignore[union-attr]
    assert p[0] < 0.5 < p[1] and p[2] < 0.5
    answer_reads = [c for call in backend.calls for c in call if c.outputs]
    # the first read chooses item 1 (wrong guess): cut, read again; item 2 right, item 3 last
    assert [len(c.outputs) for c in answer_reads] == [3, 2]
    assert "}]}" not in bytes(backend.kv[0][backend.kv[0].index(END) + 1:]).decode()


def test_planned_answers_do_not_depend_on_what_runs_beside_them() -> None:
    texts = [f"statement {i} of the report" for i in range(6)]
    reqs = [request(t, probe_fields=["v"]).model_copy(update={"answer_schema": DIGIT})
            for t in texts]
    alone, together = [], None
    for r in reqs:
        judge = engine(FakeBackend(), parallel=1)
        try:
            alone.append(run_all(judge, [r])[0])
        finally:
            judge.close()
    judge = engine(FakeBackend(), parallel=4)
    try:
        together = run_all(judge, reqs)
    finally:
        judge.close()
    def answer(r: object) -> dict[str, object]:  # what is read ahead of it may differ
        return r.model_dump(exclude={"prompt_tokens_processed", "decode_s"})  # type: ignore[attr-defined]

    assert [answer(r) for r in together] == [answer(r) for r in alone]
    assert [r.text for r in alone] == [answer_for(  # type: ignore[union-attr]
        FakeBackend().tokenizer.prompt_tokens(r.messages)) for r in reqs]


def test_every_token_is_accounted_per_step() -> None:
    from localeval.judge.client import JudgeStats
    from localeval.judge.interface import JudgeReply

    stats = JudgeStats()
    read = JudgeReply(text="{}", finish_reason="stop", prompt_tokens=90,
                      prompt_tokens_processed=40, forced_tokens=8, decode_s=0.5)
    generated = JudgeReply(text="{}", finish_reason="stop", prompt_tokens=50,
                           prompt_tokens_processed=50, completion_tokens=30, decode_s=1.25)
    stats.add(request("a").model_copy(update={"step": "faithfulness_verdicts"}), read)
    stats.add(request("b").model_copy(update={"step": "faithfulness_verdicts"}), read)
    stats.add(request("c").model_copy(update={"step": "answer_relevance_questions"}), generated)
    stats.add(request("d"), read.model_copy(update={"cached": True}))
    assert stats.tokens_by_step == {
        "faithfulness_verdicts": {"prompt_tokens_processed": 80, "generated_tokens": 0,
                                  "forced_tokens": 16, "decode_s": 1.0},
        "answer_relevance_questions": {"prompt_tokens_processed": 50, "generated_tokens": 30,
                                       "forced_tokens": 0, "decode_s": 1.25}}
    assert (stats.forced_tokens, stats.completion_tokens, stats.decode_s) == (16, 30, 2.25)
    # one table: the totals and the requests per step are read from the same per-step figures
    assert stats.by_step == {"faithfulness_verdicts": 2, "answer_relevance_questions": 1}
    assert (stats.calls, stats.cached, stats.prompt_tokens) == (3, 1, 230)


class WriterBackend(FakeBackend):
    """A judge whose answer is `TARGET`: each next character, the digit a logit ahead of the
    other (so its probability is known)."""

    TARGET = '{"items": [{"text": "a \\"quoted\\" word", "ok": 0}, {"text": "b", "ok": 1}]}'

    def _logits(self, history: list[int]) -> np.ndarray:
        logits = np.zeros(256, dtype=np.float32)
        made = bytes(history[history.index(END) + 1:]).decode()
        if not self.TARGET.startswith(made):
            return logits  # read after a wrong guess: the engine cuts back and reads again
        logits[ord(self.TARGET[len(made)])] = 5.0
        if made.endswith(": ") and self.TARGET[len(made)].isdigit():
            logits[ord(str(1 - int(self.TARGET[len(made)])))] = 4.0
        return logits


ITEMS2 = json.dumps({
    "type": "object", "required": ["items"], "properties": {"items": {
        "type": "array", "minItems": 2, "maxItems": 2, "items": {
            "type": "object", "required": ["text", "ok"],
            "properties": {"text": {"type": "string", "maxLength": 40},
                           "ok": {"enum": [0, 1]}}}}}})


def test_free_strings_are_generated_and_the_text_around_them_read() -> None:
    backend = WriterBackend()
    judge = engine(backend, parallel=1, chunk=64)
    try:
        reply = run_all(judge, [request("two items", max_tokens=200).model_copy(
            update={"answer_schema": ITEMS2, "probe_fields": ["ok"]})])[0]
    finally:
        judge.close()
    assert reply.text == WriterBackend.TARGET  # type: ignore[union-attr]
    assert json.loads(reply.text)["items"][0]["text"] == 'a "quoted" word'  # type: ignore[union-attr]
    # generated: the two strings' characters and closing quotes; the rest was read
    assert reply.completion_tokens == len('a \\"quoted\\" word"') + len('b"')  # type: ignore[union-attr]
    assert reply.forced_tokens > 0  # type: ignore[union-attr]
    assert [round(fp.probs["1"], 2) for fp in reply.field_probs] == [0.27, 0.73]  # type: ignore[union-attr]


def test_the_floor_is_each_judged_samples_own_tokens_once_plus_its_decisions() -> None:
    """summary.json → judge.floor: own tokens of the samples the judge worked on (a sample served
    from the cache alone adds none), one token per chosen slot, every generated token."""
    from localeval.judge.client import JudgeClient
    from localeval.judge.interface import FieldProbs, JudgeReply

    class Words:  # a judge that counts a text's tokens as its words
        def sampling_key(self) -> str:
            return "k"

        def text_tokens(self, text: str) -> int:
            return len(text.split())

    client = JudgeClient(Words())  # type: ignore[arg-type]
    verdict = FieldProbs(field="verdict", probs={"1": 0.9, "0": 0.1})
    read = JudgeReply(text="{}", finish_reason="stop", prompt_tokens=90,
                      prompt_tokens_processed=40, forced_tokens=8, field_probs=[verdict] * 2)
    asked = JudgeReply(text="{}", finish_reason="stop", prompt_tokens=20,
                       prompt_tokens_processed=20, completion_tokens=6)
    client.stats.add(request("x", sample_id="a"), read)
    client.stats.add(request("y", sample_id="a"), asked)
    client.stats.add(request("x", sample_id="b"), read.model_copy(update={"cached": True}))
    client.count_floor(["one two three", "four five", None, ""], "a")
    client.count_floor(["one two three", "four five"], "a")  # counted once
    client.count_floor(["never judged here"], "b")
    assert client.stats.floor() == {"own_tokens": 5, "decision_tokens": 8, "floor_tokens": 13,
                                    "work_tokens": 74, "work_over_floor": 5.692}


def _one_digit(text: str, chunk: int) -> tuple[FakeBackend, list]:
    """The reads of one DIGIT request of `text` through an engine cutting every `chunk`."""
    backend = FakeBackend()
    judge = engine(backend, parallel=1, chunk=chunk)
    try:
        reply = run_all(judge, [request(text, probe_fields=["v"]).model_copy(
            update={"answer_schema": DIGIT})])[0]
    finally:
        judge.close()
    assert reply.text == expected(text)  # type: ignore[union-attr]
    return backend, [c for call in backend.calls for c in call]


def test_the_prompts_last_chunk_and_the_answers_first_stretch_are_one_call() -> None:
    backend, reads = _one_digit("c" * 27, 12)  # 27 characters + END: chunks of 12, 12 and 4
    assert [(c.start, len(c.tokens)) for c in reads[:2]] == [(0, 12), (12, 12)]
    last = reads[2]  # the prompt's last 4 tokens, then '{"v": ' read in the same call
    assert last.start == 24 and list(last.tokens[:4]) == list(backend.kv[0][24:28])
    assert bytes(last.tokens[4:]).decode() == '{"v": '
    assert list(last.outputs) == [len(last.tokens) - 1]  # the digit's logits
    assert len(reads) == 3


def test_no_call_holds_more_than_max_chunk_tokens() -> None:
    """A last chunk that leaves no room for the answer's first stretch is read alone (the
    real backend's batch holds max_chunk tokens: one more overflows it)."""
    _, reads = _one_digit("c" * 19, 8)  # 19 characters + END: chunks of 8, 8 and 4; 4 + 6 > 8
    assert [(c.start, len(c.tokens)) for c in reads] == [(0, 8), (8, 8), (16, 4), (20, 6)]
