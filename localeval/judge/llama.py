"""The llama.cpp judge, in-process: the GGUF's own chat template, a grammar per output schema,
greedy decoding with a fixed seed. This is the sequential path (one request at a time);
llama-cpp-python reuses the KV of the longest prefix shared with the previous prompt, so
requests of one sample that begin alike skip that part of prompt processing.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from localeval.errors import JudgeError, ModelError, PromptTooLong
from localeval.judge.base import JudgeReply, JudgeRequest


def default_threads() -> int:
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class LlamaJudge:
    name = "llama.cpp"

    def __init__(self, model_path: Path, fingerprint: str, *, n_ctx: int = 4096,
                 n_threads: int | None = None, n_gpu_layers: int = -1, n_batch: int = 512,
                 seed: int = 0, temperature: float = 0.0) -> None:
        try:
            import llama_cpp
        except ImportError:
            raise ModelError("llama-cpp-python is not installed: run scripts/setup.sh "
                             "(or pip install llama-cpp-python)") from None
        self.model_path = Path(model_path)
        self.fingerprint = fingerprint
        self.seed, self.temperature = seed, temperature
        threads = n_threads or default_threads()
        try:
            self.llm = llama_cpp.Llama(
                model_path=str(model_path), n_ctx=n_ctx, n_threads=threads,
                n_threads_batch=threads, n_gpu_layers=n_gpu_layers, n_batch=n_batch,
                seed=seed, verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise ModelError(f"llama.cpp could not load {model_path}: {exc}; run "
                             "`python -m localeval models verify`") from None
        self.n_ctx = self.llm.n_ctx()
        self.gpu_offload = bool(llama_cpp.llama_supports_gpu_offload())
        self._format = chat_formatter(self.llm)
        self._grammars: dict[str, Any] = {}
        self._lock = asyncio.Lock()

    def sampling_key(self) -> str:
        return f"temperature={self.temperature};seed={self.seed};greedy"

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        """Chat-template the messages and tokenize (special tokens parsed, no extra BOS)."""
        text = self._format(messages)
        return self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def grammar(self, schema_json: str) -> Any:
        """Compile a JSON schema into a llama.cpp grammar once, then reuse it."""
        if schema_json not in self._grammars:
            from llama_cpp import LlamaGrammar

            self._grammars[schema_json] = LlamaGrammar.from_string(gbnf_for_schema(schema_json),
                                                                   verbose=False)
        return self._grammars[schema_json]

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        async with self._lock:
            return await asyncio.to_thread(self._complete, request)

    def _complete(self, request: JudgeRequest) -> JudgeReply:
        from llama_cpp import Llama

        tokens = self.prompt_tokens(request.messages)
        if len(tokens) + request.max_tokens > self.n_ctx:
            raise PromptTooLong(len(tokens), self.n_ctx, request.max_tokens)
        reused = Llama.longest_token_prefix(list(self.llm._input_ids), tokens)
        out = self.llm.create_completion(
            tokens, max_tokens=request.max_tokens, temperature=self.temperature, top_k=1,
            seed=self.seed, grammar=self.grammar(request.answer_schema),
        )
        choice = out["choices"][0]  # type: ignore[index]
        usage = out["usage"]  # type: ignore[index]
        return JudgeReply(
            text=choice["text"], finish_reason=choice["finish_reason"] or "stop",
            prompt_tokens=usage["prompt_tokens"], completion_tokens=usage["completion_tokens"],
            prompt_tokens_processed=max(1, len(tokens) - reused),
        )

    def close(self) -> None:
        self.llm.close() if hasattr(self.llm, "close") else None


def gbnf_for_schema(schema_json: str) -> str:
    """The GBNF text of a JSON schema (llama-cpp-python's converter), root rule `root`."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    try:
        return json_schema_to_gbnf(schema_json)
    except Exception as exc:  # the converter raises several types
        raise JudgeError(f"output schema could not be turned into a grammar: {exc}") from None


def chat_formatter(llm: Any) -> Callable[[list[dict[str, str]]], str]:
    """A function messages → prompt text using the chat template stored in the GGUF."""

    def token_text(token_id: int) -> str:
        if token_id < 0:
            return ""
        return llm.detokenize([token_id], special=True).decode("utf-8", errors="ignore")

    return make_chat_formatter(llm.metadata.get("tokenizer.chat_template"), token_text,
                               llm.token_eos(), llm.token_bos())


def make_chat_formatter(template: str | None, token_text: Callable[[int], str], eos: int,
                        bos: int) -> Callable[[list[dict[str, str]]], str]:
    """messages → prompt text with a GGUF's Jinja chat template."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    if not template:
        raise ModelError("the GGUF has no chat template (tokenizer.chat_template); use an "
                         "instruct model such as the profiles' Qwen2.5 Instruct GGUFs")
    formatter = Jinja2ChatFormatter(template=template, eos_token=token_text(eos),
                                    bos_token=token_text(bos))

    def render(messages: list[dict[str, str]]) -> str:
        return formatter(messages=messages).prompt  # type: ignore[arg-type]

    return render
