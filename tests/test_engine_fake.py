"""The engine's scheduling with a fake llama.cpp backend (no model): admission and refill,
aligned prefix reuse, eviction, probabilities, and failures that reach every waiting caller.

The fake keeps each sequence's tokens as its "KV" and checks that every decode continues a
sequence exactly where it ends, so a wrong prefix copy or trim shows up as a wrong answer or an
assertion. Its "model" answers `{"v": D}` where D depends on the whole prompt.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import numpy as np
import pytest

from localeval.errors import JudgeError, PromptTooLong
from localeval.judge.interface import JudgeReply, JudgeRequest
from localeval.judge.llamacpp.engine import Engine
from localeval.judge.llamacpp.llama import DecodeChunk
from localeval.judge.llamacpp.prefix_pool import common_prefix
from localeval.judge.llamacpp.schedule import MAX_INVARIANT_STEP

EOG, END, NL, N_VOCAB = 0, 1, 10, 256


class FakeTokenizer:
    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        text = "".join(m["content"] for m in messages)
        return [NL if c == "\n" else 11 + ord(c) % 190 for c in text] + [END]

    def tokens(self, text: str) -> list[int]:
        return [ord(c) for c in text]

    def piece(self, token: int) -> bytes:
        return bytes([token])


class FakeGrammar:
    def allows(self, token: int) -> bool:
        return True

    def mask(self, logits: np.ndarray) -> np.ndarray:
        return logits.copy()

    def sample(self, logits: np.ndarray, chain: object) -> int:
        return int(np.argmax(logits))

    def accept(self, token: int) -> None:
        pass

    def free(self) -> None:
        pass


def answer_for(prompt: list[int]) -> str:
    return '{"v": ' + str(sum(prompt) % 7) + "}"


class FakeBackend:
    n_ctx = 400

    def __init__(self, n_seq: int = 8, fail_at: int | None = None) -> None:
        self.n_seq = n_seq
        self.tokenizer = FakeTokenizer()
        self.kv: dict[int, list[int]] = {i: [] for i in range(n_seq)}
        self.calls: list[list[DecodeChunk]] = []
        self.fail_at = fail_at

    def decode(self, chunks: list[DecodeChunk]) -> list[np.ndarray]:
        self.calls.append(chunks)
        if self.fail_at is not None and len(self.calls) >= self.fail_at:
            raise RuntimeError("boom")
        out = []
        for c in chunks:
            seq = self.kv[c.seq_id]
            assert c.start == len(seq), f"seq {c.seq_id}: decode at {c.start}, holds {len(seq)}"
            seq.extend(c.tokens)
            out.extend(self._logits(seq[:c.start + i + 1]) for i in c.outputs)
        return out

    def _logits(self, history: list[int]) -> np.ndarray:
        logits = np.zeros(N_VOCAB, dtype=np.float32)
        if END not in history:  # scoring a continuation: prefer "yes"
            logits[ord("y")] = 3.0
            return logits
        end = history.index(END)
        prompt, made = history[:end + 1], bytes(history[end + 1:]).decode()
        target = answer_for(prompt)
        if made == target:
            logits[EOG] = 10.0
        else:
            logits[ord(target[len(made)])] = 10.0
            if made.endswith(": "):  # the digit: a runner-up one logit below
                logits[ord(str((int(target[len(made)]) + 1) % 7))] = 9.0
        logits[ord("y")] += 2.0
        logits[ord("n")] += 1.0
        return logits

    def is_eog(self, token: int) -> bool:
        return token == EOG

    def seq_keep(self, seq_id: int, n: int) -> None:
        del self.kv[seq_id][n:]

    def seq_copy(self, src: int, dst: int, n: int) -> None:
        self.kv[dst] = list(self.kv[src][:n])

    def grammar(self, gbnf: str) -> FakeGrammar:
        return FakeGrammar()

    def dist_sampler(self, temperature: float, seed: int) -> object:
        return object()

    def free_sampler(self, sampler: object) -> None:
        pass

    def close(self) -> None:
        pass


def request(text: str, max_tokens: int = 20, **kw: object) -> JudgeRequest:
    return JudgeRequest(step="t", messages=[{"role": "user", "content": text}],
                        answer_schema="{}", max_tokens=max_tokens, **kw)  # type: ignore[arg-type]


def engine(backend: FakeBackend, chunk: int = 8, min_chunk: int | None = None,
           **kw: object) -> Engine:
    """An engine over the fake; prompts are cut every `chunk` tokens and at paragraph breaks
    once a chunk holds `min_chunk` (default chunk // 2) tokens."""
    kw.setdefault("parallel", 2)
    return Engine(backend, "fake", gbnf=lambda schema: "root ::= x", max_chunk=chunk,  # type: ignore[arg-type]
                  min_chunk=min_chunk or max(1, chunk // 2), **kw)


def run_all(judge: Engine, requests: list[JudgeRequest]) -> list[JudgeReply | BaseException]:
    async def go() -> list[JudgeReply | BaseException]:
        jobs = (judge.complete(r) for r in requests)
        return await asyncio.wait_for(asyncio.gather(*jobs, return_exceptions=True), 20)

    return asyncio.run(go())


def expected(text: str) -> str:
    return answer_for(FakeTokenizer().prompt_tokens([{"role": "user", "content": text}]))


def test_every_request_answered_with_at_most_parallel_in_flight() -> None:
    backend = FakeBackend(n_seq=4)
    judge = engine(backend, parallel=2)
    texts = [f"question number {i} about topic {i * 7}" for i in range(9)]
    try:
        replies = run_all(judge, [request(t) for t in texts])
    finally:
        judge.close()
    assert [r.text for r in replies] == [expected(t) for t in texts]  # type: ignore[union-attr]
    assert all(r.finish_reason == "stop" for r in replies)  # type: ignore[union-attr]
    in_flight = max(len({c.seq_id for c in call}) for call in backend.calls)
    assert in_flight <= 2
    assert len(replies) == 9


def test_prompt_chunks_start_at_multiples_of_the_chunk_and_hold_one_sequence() -> None:
    backend = FakeBackend()
    judge = engine(backend, parallel=3, chunk=8)
    try:
        run_all(judge, [request("x" * n) for n in (5, 17, 30, 41)])
    finally:
        judge.close()
    reads = [call for call in backend.calls if len(call[0].tokens) > 1 or not call[0].outputs]
    assert reads
    for call in reads:
        assert len(call) == 1  # a prompt chunk is decoded alone
        assert call[0].start % 8 == 0 and len(call[0].tokens) <= 8


def test_shared_prefix_is_reused_at_chunk_boundaries_with_the_same_answer() -> None:
    shared = "You are a careful judge. Context: the sky is blue over the sea. "
    texts = [shared + "Statement A.", shared + "Statement B, longer."]
    backend = FakeBackend()
    judge = engine(backend, parallel=1, chunk=8)
    try:
        first = run_all(judge, [request(texts[0])])[0]
        second = run_all(judge, [request(texts[1])])[0]
    finally:
        judge.close()
    tok = FakeTokenizer().prompt_tokens
    n = common_prefix(tok([{"role": "user", "content": texts[0]}]),
                      tok([{"role": "user", "content": texts[1]}]), 10_000) // 8 * 8
    assert n >= 48
    assert second.prompt_tokens_processed == second.prompt_tokens - n  # type: ignore[union-attr]
    assert first.prompt_tokens_processed == first.prompt_tokens  # type: ignore[union-attr]
    assert second.text == expected(texts[1])  # type: ignore[union-attr]


def test_generated_tokens_are_never_reused_as_a_prefix() -> None:
    backend = FakeBackend()
    pool = engine(backend, parallel=1, chunk=4).pool
    every4 = [4, 8, 12, 16, 20]
    slot, reused = pool.acquire(list(range(10, 23)), every4)
    assert reused == 0
    pool.extend(slot, list(range(10, 22)), prompt=True)  # 12 prompt tokens read
    pool.extend(slot, [22, 40, 41, 42, 43], prompt=False)  # the last prompt token + generated
    pool.release(slot)
    # a later prompt equal to everything the slot holds may reuse whole prompt chunks only
    assert pool.reusable(slot, [*slot.tokens, 99], every4) == 12
    assert pool.reusable(slot, [10, 11, 12, 13, 14, 15, 0], every4) == 4
    assert pool.reusable(slot, [*slot.tokens, 99], [3, 7, 13]) == 7  # the prompt's own cuts


def test_least_recently_used_prefix_is_evicted_and_answers_stay_right() -> None:
    backend = FakeBackend(n_seq=3)
    judge = engine(backend, parallel=1, chunk=4)
    texts = [f"{c * 9} is a distinct prompt" for c in "abcde"]
    try:
        replies = [run_all(judge, [request(t)])[0] for t in texts]
        again = run_all(judge, [request(texts[0])])[0]
    finally:
        judge.close()
    assert judge.pool.evictions >= 2
    assert [r.text for r in replies] == [expected(t) for t in texts]  # type: ignore[union-attr]
    assert again.text == expected(texts[0])  # type: ignore[union-attr]
    assert again.prompt_tokens_processed == again.prompt_tokens  # type: ignore[union-attr]


def test_generation_steps_stay_under_the_invariance_limit() -> None:
    backend = FakeBackend(n_seq=40)
    judge = engine(backend, parallel=40, chunk=64)
    try:
        replies = run_all(judge, [request(f"q{i}") for i in range(40)])
    finally:
        judge.close()
    assert all(isinstance(r, JudgeReply) for r in replies)
    assert max(len(call) for call in backend.calls) <= MAX_INVARIANT_STEP


def test_a_failing_decode_fails_every_waiting_request_instead_of_hanging() -> None:
    judge = engine(FakeBackend(fail_at=3), parallel=2)
    try:
        replies = run_all(judge, [request(f"request {i}") for i in range(6)])
        later = run_all(judge, [request("after")])[0]
    finally:
        judge.close()
    assert all(isinstance(r, JudgeError) and "boom" in str(r) for r in replies)
    assert isinstance(later, JudgeError) and "engine failed" in str(later)


def test_too_long_and_cancelled_requests_fail_alone() -> None:
    backend = FakeBackend()
    judge = engine(backend, parallel=2)
    try:
        replies = run_all(judge, [request("y" * 390, max_tokens=50), request("fine")])
    finally:
        judge.close()
    assert isinstance(replies[0], PromptTooLong)
    assert replies[1].text == expected("fine")  # type: ignore[union-attr]


def test_field_probabilities_are_read_before_sampling() -> None:
    judge = engine(FakeBackend())
    try:
        reply = run_all(judge, [request("probe me", probe_fields=["v"])])[0]
    finally:
        judge.close()
    assert isinstance(reply, JudgeReply)
    [entry] = reply.field_probs
    digit = reply.text[-2]
    runner_up = str((int(digit) + 1) % 7)
    assert entry.field == "v" and max(entry.probs, key=entry.probs.get) == digit
    # logits 10 and 9 (plus the small y/n bumps elsewhere): p = e/(e+1) before the rest
    assert entry.probs[digit] / entry.probs[runner_up] == pytest.approx(np.e, rel=1e-4)


def test_continuation_probabilities_without_generating() -> None:
    backend = FakeBackend()
    judge = engine(backend, parallel=1)
    try:
        single = run_all(judge, [request("is it so?", continuations=["y", "n"])])[0]
        multi = run_all(judge, [request("is it so?", continuations=["ye", "n"])])[0]
    finally:
        judge.close()
    assert isinstance(single, JudgeReply) and isinstance(multi, JudgeReply)
    assert single.completion_tokens == 0 and single.text.startswith("{")
    # logits after the prompt: y 2, n 1 -> P(y)/P(n) = e over the two continuations
    assert single.choice_probs["y"] / single.choice_probs["n"] == pytest.approx(np.e, rel=1e-4)
    assert sum(multi.choice_probs.values()) == pytest.approx(1.0)
    # "e" after "y" has logit 0 against 10 for the model's own next token: "ye" loses
    assert multi.choice_probs["ye"] < 1e-3
    prompt = FakeTokenizer().prompt_tokens([{"role": "user", "content": "is it so?"}])
    assert backend.kv[0] == prompt  # the scored continuation was taken back out of the KV


def test_a_paragraph_break_ends_a_chunk_so_fixed_instructions_are_reused_whole() -> None:
    instructions = "Judge each statement against the context, one by one, in order." + "\n\n"
    texts = [instructions + "Context: the sky is blue.", instructions + "Context: grass is green."]
    backend = FakeBackend()
    judge = engine(backend, parallel=1, chunk=512, min_chunk=32)
    try:
        first, second = (run_all(judge, [request(t)])[0] for t in texts)
    finally:
        judge.close()
    assert second.prompt_tokens_processed == second.prompt_tokens - len(instructions)  # type: ignore[union-attr]
    assert first.prompt_tokens_processed == first.prompt_tokens  # type: ignore[union-attr]
    assert second.text == expected(texts[1])  # type: ignore[union-attr]
    reads = [c[0] for c in backend.calls if len(c[0].tokens) > 1]
    assert [c.start for c in reads] == [0, len(instructions), len(instructions)]


def test_the_cache_key_names_the_prompt_cuts_alike_before_and_after_loading() -> None:
    from localeval.judge.llamacpp import LazyJudge

    loaded = engine(FakeBackend(), chunk=512, min_chunk=64)
    try:
        lazy = LazyJudge(Path("never-loaded.gguf"), "fake", parallel=2, max_chunk=512)
        assert lazy.sampling_key() == loaded.sampling_key()
        assert "cuts=64/512" in loaded.sampling_key()
        other = LazyJudge(Path("never-loaded.gguf"), "fake", parallel=2, max_chunk=256)
        assert other.sampling_key() != loaded.sampling_key()
    finally:
        loaded.close()
