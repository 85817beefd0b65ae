"""Everything that touches llama.cpp: loading a GGUF, the chat template, tokenizing, grammars,
and one `LlamaBackend` that decodes chunks of tokens into per-sequence KV streams.

Models are always loaded with `use_extra_bufts = False`: llama.cpp's extra buffer types (weight
repacking, AMX) die with SIGILL on some hosts (Xeons with AMX under Firecracker) although the
kernel grants AMX permission, and gave no speed here. Nothing in the package loads a model any
other way (tests/test_engine.py checks the source).

The KV cache is split into one stream per sequence (`kv_unified = False`): a sequence's
attention then spans only its own cells, laid out by its own history, so its results do not
depend on what other sequences hold (batch invariance; see localeval/docs/engine.md).
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from localeval.errors import JudgeError, ModelError

TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)], align=True)


def default_threads() -> int:
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def import_llama() -> Any:
    try:
        import llama_cpp
        from llama_cpp import _logger
    except ImportError:
        raise ModelError("llama-cpp-python is not installed: run scripts/setup.sh "
                         "(or pip install llama-cpp-python)") from None
    _logger.set_verbose(False)
    return llama_cpp


def model_params(llama_cpp: Any, n_gpu_layers: int = 0, *, vocab_only: bool = False) -> Any:
    """Model-load parameters. Extra buffer types (repacking, AMX) are never enabled."""
    params = llama_cpp.llama_model_default_params()
    params.n_gpu_layers = n_gpu_layers if n_gpu_layers >= 0 else 0x7FFFFFFF
    params.use_extra_bufts = False
    params.vocab_only = vocab_only
    return params


def load_model(model_path: Path, n_gpu_layers: int = 0, *, vocab_only: bool = False) -> Any:
    """A llama-cpp-python `LlamaModel` (the weights, or only the vocabulary)."""
    llama_cpp = import_llama()
    from llama_cpp import _internals

    try:
        return _internals.LlamaModel(
            path_model=str(model_path),
            params=model_params(llama_cpp, n_gpu_layers, vocab_only=vocab_only), verbose=False)
    except (ValueError, RuntimeError) as exc:
        raise ModelError(f"llama.cpp could not load {model_path}: {exc}; run "
                         "`python -m localeval models verify`") from None


class Tokenizer:
    """The GGUF's chat template and tokenizer (a vocabulary-only load is enough)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        metadata = model.metadata()
        self._format = make_chat_formatter(
            metadata.get("tokenizer.chat_template"), self.special_piece,
            model.token_eos(), model.token_bos())

    def special_piece(self, token: int) -> str:
        if token < 0:
            return ""
        return self._model.token_to_piece(token, special=True).rstrip(b"\0").decode(
            "utf-8", errors="ignore")

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        """Chat-template the messages and tokenize, no extra BOS. Only the template's own
        special tokens are parsed: a message's text is plain text, so `<|im_start|>` inside an
        answer or a context stays characters and never becomes a chat-role token. A prompt
        whose texts hold no special token tokenizes exactly as the whole text parsed at once."""
        if not any(self._has_special(m["content"]) for m in messages):
            return self._model.tokenize(self._format(messages).encode("utf-8"), add_bos=False,
                                        special=True)
        marks = [f"\x00\x01{i}\x01\x00" for i in range(len(messages))]
        skeleton = self._format([{**m, "content": k} for m, k in zip(messages, marks,
                                                                       strict=True)])
        out: list[int] = []
        for mark, message in zip(marks, messages, strict=True):
            head, _, skeleton = skeleton.partition(mark)
            out += self._tokenize(head, special=True)
            out += self._tokenize(message["content"], special=False)
        return out + self._tokenize(skeleton, special=True)

    def _has_special(self, text: str) -> bool:
        return self._tokenize(text, special=True) != self._tokenize(text, special=False)

    def _tokenize(self, text: str, *, special: bool) -> list[int]:
        if not text:
            return []
        return self._model.tokenize(text.encode("utf-8"), add_bos=False, special=special)

    def tokens(self, text: str) -> list[int]:
        """Plain text (a continuation) → tokens, no special tokens, no BOS."""
        return self._model.tokenize(text.encode("utf-8"), add_bos=False, special=False)

    def piece(self, token: int) -> bytes:
        return self._model.token_to_piece(token, special=False).rstrip(b"\0")


@dataclass
class DecodeChunk:
    """Tokens of one sequence to decode at positions start.., and which of them give logits: a
    chunk of a prompt, a stretch of a planned answer, or one generated token (not a document
    chunk: that is generate/chunking.Chunk)."""

    seq_id: int
    start: int
    tokens: Sequence[int]
    outputs: Sequence[int]  # indexes into tokens whose logits are wanted


class DecodeBackend(Protocol):
    """What the engine decodes with: LlamaBackend below, a fake one in the tests (not the run's
    loaded models: that is models/backends.Backends)."""

    n_ctx: int
    n_seq: int
    tokenizer: Any

    def decode(self, chunks: list[DecodeChunk]) -> list[np.ndarray]: ...

    def is_eog(self, token: int) -> bool: ...

    def seq_keep(self, seq_id: int, n: int) -> None: ...

    def seq_copy(self, src: int, dst: int, n: int) -> None: ...

    def grammar(self, gbnf: str) -> Any: ...

    def dist_sampler(self, temperature: float, seed: int) -> Any: ...

    def free_sampler(self, sampler: Any) -> None: ...

    def close(self) -> None: ...


class LlamaBackend:
    """One llama.cpp context with `n_seq` KV streams of `n_ctx` cells each."""

    def __init__(self, model_path: Path, *, n_ctx: int, n_seq: int, n_batch: int,
                 n_threads: int | None = None, n_gpu_layers: int = 0,
                 flash_attn: bool = False, hidden_layers: Sequence[int] = ()) -> None:
        ll = self._ll = import_llama()
        from llama_cpp import _internals

        self._model = load_model(model_path, n_gpu_layers)
        self.last_hidden: np.ndarray | None = None
        self.tap = None  # the residual stream for a learned verifier (judge/llamacpp/hidden.py)
        if hidden_layers:
            from localeval.judge.llamacpp.hidden import HiddenTap

            self.tap = HiddenTap(ll, hidden_layers, ll.llama_model_n_layer(self._model.model),
                                 ll.llama_model_n_embd(self._model.model))
        self.tokenizer = Tokenizer(self._model)
        threads = n_threads or default_threads()
        n_seq = min(n_seq, ll.llama_max_parallel_sequences())
        cparams = ll.llama_context_default_params()
        cparams.n_ctx = n_ctx * n_seq  # split evenly: every stream holds one full window
        cparams.n_batch = n_batch
        cparams.n_ubatch = n_batch
        cparams.n_seq_max = n_seq
        cparams.kv_unified = False
        cparams.n_threads = threads
        cparams.n_threads_batch = threads
        cparams.flash_attn_type = (ll.LLAMA_FLASH_ATTN_TYPE_ENABLED if flash_attn
                                   else ll.LLAMA_FLASH_ATTN_TYPE_DISABLED)
        cparams.no_perf = True
        if self.tap is not None:
            cparams.cb_eval = self.tap.callback
        try:
            self._ctx = _internals.LlamaContext(model=self._model, params=cparams, verbose=False)
        except ValueError as exc:
            self._model.close()
            raise ModelError(f"llama.cpp could not create a context of {n_seq} x {n_ctx} "
                             f"tokens: {exc}; lower --parallel or --n-ctx") from None
        self.n_seq, self.n_ctx, self.n_batch = n_seq, n_ctx, n_batch
        self.gpu_offload = bool(ll.llama_supports_gpu_offload()) and n_gpu_layers != 0
        self._vocab = self._model.vocab
        self.n_vocab = ll.llama_vocab_n_tokens(self._vocab)
        self._mem = ll.llama_get_memory(self._ctx.ctx)
        self._batch = ll.llama_batch_init(n_batch, 0, 1)

    # ------------------------------------------------------------------ decoding

    def decode(self, chunks: Sequence[DecodeChunk], hidden: bool = False) -> list[np.ndarray]:
        """Decode the chunks in one call; the logits (copies) of every wanted output, in order.
        With `hidden` (a backend made with `hidden_layers`), `last_hidden` then holds the
        tapped layers' rows of those outputs (judge/llamacpp/hidden.py)."""
        batch, n = self._batch, 0
        wanted: list[int] = []
        for chunk in chunks:
            outputs = set(chunk.outputs)
            for i, tok in enumerate(chunk.tokens):
                batch.token[n] = tok
                batch.pos[n] = chunk.start + i
                batch.n_seq_id[n] = 1
                batch.seq_id[n][0] = chunk.seq_id
                batch.logits[n] = i in outputs
                if i in outputs:
                    wanted.append(n)
                n += 1
        if n > self.n_batch:
            raise JudgeError(f"internal error: {n} tokens in a batch of {self.n_batch}")
        batch.n_tokens = n
        if hidden:
            if self.tap is None:
                raise JudgeError("internal error: hidden states asked of a backend without a tap")
            self.tap.arm()
        rc = self._ll.llama_decode(self._ctx.ctx, batch)
        if rc != 0:
            raise RuntimeError(f"llama_decode returned {rc}")
        if hidden:
            self.last_hidden = self.tap.take(n, wanted)
        return [np.ctypeslib.as_array(self._ll.llama_get_logits_ith(self._ctx.ctx, i),
                                      shape=(self.n_vocab,)).copy() for i in wanted]

    def is_eog(self, token: int) -> bool:
        return bool(self._ll.llama_vocab_is_eog(self._vocab, token))

    # ------------------------------------------------------------------ KV streams

    def seq_keep(self, seq_id: int, n: int) -> None:
        """Keep the first n positions of a sequence, drop the rest (n=0: empty it)."""
        self._ll.llama_memory_seq_rm(self._mem, seq_id, n, -1)

    def seq_copy(self, src: int, dst: int, n: int) -> None:
        """dst := the first n positions of src (the whole stream is copied, then trimmed)."""
        self._ll.llama_memory_seq_rm(self._mem, dst, -1, -1)
        self._ll.llama_memory_seq_cp(self._mem, src, dst, -1, -1)
        self._ll.llama_memory_seq_rm(self._mem, dst, n, -1)

    # ------------------------------------------------------------------ grammars

    def grammar(self, gbnf: str) -> Grammar:
        ptr = self._ll.llama_sampler_init_grammar(self._vocab, gbnf.encode("utf-8"), b"root")
        if not ptr:
            raise JudgeError("llama.cpp rejected the grammar of the output schema")
        return Grammar(self._ll, ptr, self.n_vocab)

    def dist_sampler(self, temperature: float, seed: int) -> Any:
        ll = self._ll
        chain = ll.llama_sampler_chain_init(ll.llama_sampler_chain_default_params())
        ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_temp(temperature))
        ll.llama_sampler_chain_add(chain, ll.llama_sampler_init_dist(seed))
        return chain

    def free_sampler(self, sampler: Any) -> None:
        self._ll.llama_sampler_free(sampler)

    def close(self) -> None:
        if self._batch is not None:
            self._ll.llama_batch_free(self._batch)
            self._batch = None
            self._ctx.close()
            self._model.close()


class Grammar:
    """A llama.cpp grammar sampler: which tokens the schema allows next, and accepting one."""

    def __init__(self, ll: Any, ptr: Any, n_vocab: int) -> None:
        self._ll, self.ptr = ll, ptr
        self._cand = np.zeros(n_vocab, dtype=TOKEN_DATA)
        self._cand["id"] = np.arange(n_vocab, dtype=np.int32)
        self._one = np.zeros(1, dtype=TOKEN_DATA)

    def allows(self, token: int) -> bool:
        one = self._one
        one["id"][0], one["logit"][0], one["p"][0] = token, 0.0, 0.0
        self._apply(one)
        return bool(np.isfinite(one["logit"][0]))

    def mask(self, logits: np.ndarray) -> np.ndarray:
        """The logits with every token the grammar forbids at -inf."""
        cand = self._cand
        cand["logit"] = logits
        cand["p"] = 0.0
        self._apply(cand)
        return cand["logit"].copy()

    def sample(self, logits: np.ndarray, chain: Any) -> int:
        """Apply the grammar, then a sampler chain (temperature > 0); the token chosen."""
        cand = self._cand
        cand["logit"] = logits
        cand["p"] = 0.0
        arr = self._apply(cand)
        self._ll.llama_sampler_apply(chain, ctypes.byref(arr))
        return int(cand["id"][arr.selected])

    def accept(self, token: int) -> None:
        self._ll.llama_sampler_accept(self.ptr, token)

    def free(self) -> None:
        if self.ptr is not None:
            self._ll.llama_sampler_free(self.ptr)
            self.ptr = None

    def _apply(self, data: np.ndarray) -> Any:
        ll = self._ll
        arr = ll.llama_token_data_array(data=data.ctypes.data_as(ll.llama_token_data_p),
                                        size=len(data), selected=-1, sorted=False)
        ll.llama_sampler_apply(self.ptr, ctypes.byref(arr))
        return arr


def gbnf_for_schema(schema_json: str) -> str:
    """The GBNF text of a JSON schema (llama-cpp-python's converter), root rule `root`."""
    from llama_cpp.llama_grammar import json_schema_to_gbnf

    try:
        return json_schema_to_gbnf(schema_json)
    except Exception as exc:  # the converter raises several types
        raise JudgeError(f"output schema could not be turned into a grammar: {exc}") from None


def make_chat_formatter(template: str | None, token_text: Callable[[int], str], eos: int,
                        bos: int) -> Callable[[list[dict[str, str]]], str]:
    """messages → prompt text with a GGUF's Jinja chat template."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    if not template:
        raise ModelError("the GGUF has no chat template (tokenizer.chat_template); use an "
                         "instruct model such as the profiles' Qwen2.5 Instruct GGUFs")
    from jinja2 import TemplateError  # SecurityError (the sandbox) and syntax errors included

    def refused(exc: Exception) -> ModelError:
        return ModelError(f"the GGUF's chat template cannot be used ({type(exc).__name__}: "
                          f"{str(exc)[:120]}); use a GGUF whose sha256 the manifest pins")

    try:
        formatter = Jinja2ChatFormatter(template=template, eos_token=token_text(eos),
                                        bos_token=token_text(bos))
    except TemplateError as exc:
        raise refused(exc) from None

    def render(messages: list[dict[str, str]]) -> str:
        try:
            return formatter(messages=messages).prompt  # type: ignore[arg-type]
        except TemplateError as exc:
            raise refused(exc) from None

    render([{"role": "system", "content": "s"}, {"role": "user", "content": "u"}])  # fail early
    return render
