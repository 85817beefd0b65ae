"""The llama.cpp engine, behind one door: this module is what the rest of localeval imports.

The judge as the runner gets it (`LazyJudge`): the engine is built on the first request that the
answer cache cannot serve, so a rerun whose answers are all cached loads no model, or at once in
a thread beside the embedder's load when no answer can come from the cache (`start_loading`).
Counting a prompt's tokens (for splitting long contexts) needs only the vocabulary, loaded on its
own.

Inside (nothing outside this package imports these modules; pyproject.toml's import contracts
check it): `engine` (the queue, the worker thread, the decode calls), `llama` (every llama.cpp
call), `schedule` (which requests start, what each step decodes), `prefix_pool` (the KV slots and
shared prefixes), `chunks` (where a prompt is cut), `plan` (answers read, not generated), `jobs`
(a request inside the engine), `sampling` (choices under a grammar) and `hidden` (the residual
stream a learned verifier reads). The door also hands on what `estimate` needs to replay the
engine's own schedule without a model.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from localeval.judge.interface import JudgeReply, JudgeRequest
from localeval.judge.llamacpp.chunks import MIN_CHUNK, cuts, last_chunk, next_cut
from localeval.judge.llamacpp.engine import Engine, sampling_key
from localeval.judge.llamacpp.llama import (
    DecodeChunk,
    LlamaBackend,
    Tokenizer,
    default_threads,
    load_model,
)
from localeval.judge.llamacpp.plan import Choice, Free, Reading, plan_for
from localeval.judge.llamacpp.prefix_pool import NoMemory, PrefixPool, Slot
from localeval.judge.llamacpp.schedule import admit, step

__all__ = [  # the judge a run uses and its engine; llama.cpp's model; what estimate replays
    "MIN_CHUNK", "Choice", "DecodeChunk", "Engine", "Free", "LazyJudge", "LlamaBackend", "NoMemory",
    "PrefixPool", "Reading", "Slot", "Tokenizer", "admit", "cuts", "default_parallel",
    "default_threads", "gpu_offload", "last_chunk", "load_model", "next_cut", "open_engine",
    "plan_for", "resolve_parallel", "sampling_key", "step",
]


def default_parallel(gpu_offload: bool = False) -> int:
    """Sequences decoded together when --parallel is not given (4 on a CPU, 8 on a GPU)."""
    return 8 if gpu_offload else 4


def resolve_parallel(parallel: int | None, n_gpu_layers: int = -1) -> int:
    """--parallel as given, else the hardware default (asks llama.cpp about a GPU backend)."""
    if parallel is not None:
        return parallel
    try:
        import llama_cpp
    except ImportError:
        return 1
    return default_parallel(bool(llama_cpp.llama_supports_gpu_offload()) and n_gpu_layers != 0)


def open_engine(model_path: Path, fingerprint: str, *, parallel: int, n_ctx: int = 4096,
                n_threads: int | None = None, n_gpu_layers: int = -1, max_chunk: int = 512,
                keep_prefixes: int | None = None, seed: int = 0, temperature: float = 0.0,
                prefix_reuse: bool = True, hidden_layers: Sequence[int] = ()) -> Engine:
    """Load the model and start the engine: `parallel` active slots plus `keep_prefixes`
    (default: as many) slots that keep recent prompts for prefix reuse; `hidden_layers`: the
    layers a learned verifier reads (judge/llamacpp/hidden.py)."""
    from localeval.judge.llamacpp.llama import LlamaBackend

    keep = parallel if keep_prefixes is None else keep_prefixes
    backend = LlamaBackend(model_path, n_ctx=n_ctx, n_seq=parallel + keep,
                           n_batch=max(max_chunk, min(parallel, 30)), n_threads=n_threads,
                           n_gpu_layers=n_gpu_layers, hidden_layers=hidden_layers)
    try:
        return Engine(backend, fingerprint, parallel=min(parallel, backend.n_seq),
                      max_chunk=max_chunk, seed=seed, temperature=temperature,
                      prefix_reuse=prefix_reuse)
    except BaseException:
        backend.close()
        raise


class LazyJudge:
    """A judge whose model loads on the first request that reaches it, or in a thread from
    `start_loading` on; the first request waits for that load."""

    name = "llama.cpp"

    def __init__(self, model_path: Path, fingerprint: str, *, parallel: int, n_ctx: int = 4096,
                 seed: int = 0, temperature: float = 0.0, **engine: Any) -> None:
        self.model_path, self.fingerprint = Path(model_path), fingerprint
        self.parallel, self.n_ctx = parallel, n_ctx
        self.seed, self.temperature = seed, temperature
        self._engine_args = dict(parallel=parallel, n_ctx=n_ctx, seed=seed,
                                 temperature=temperature, **engine)
        self.engine: Engine | None = None
        self.load_seconds: float | None = None  # None until the model has been loaded
        self._tokenizer: Any = None
        self._vocab: Any = None
        self._lock = asyncio.Lock()
        self._loading: concurrent.futures.Future[Engine] | None = None

    def start_loading(self) -> None:
        """Load the model now, in a thread, while the caller builds what else the run needs."""
        if self.engine is not None or self._loading is not None:
            return
        loading: concurrent.futures.Future[Engine] = concurrent.futures.Future()
        loading.set_running_or_notify_cancel()  # a request's cancel must not cancel the load

        def load() -> None:
            try:
                loading.set_result(self._open())
            except BaseException as exc:  # the first request raises it
                loading.set_exception(exc)

        self._loading = loading
        threading.Thread(target=load, name="localeval-judge-load", daemon=True).start()

    def _open(self) -> Engine:
        started = time.perf_counter()
        engine = open_engine(self.model_path, self.fingerprint, **self._engine_args)
        self.load_seconds = round(time.perf_counter() - started, 3)
        return engine

    @property
    def loaded(self) -> bool:
        return self.engine is not None

    def sampling_key(self) -> str:
        return sampling_key(self.temperature, self.seed, self._engine_args.get("max_chunk", 512),
                            MIN_CHUNK)

    def prompt_tokens(self, messages: list[dict[str, str]]) -> list[int]:
        return self.tokenizer().prompt_tokens(messages)

    def text_tokens(self, text: str) -> int:
        """How many tokens a text of the material takes (dataset text: no special tokens)."""
        return len(self.tokenizer().tokens(text))

    def tokenizer(self) -> Any:
        """The loaded model's tokenizer, else one over the model's vocabulary alone."""
        if self.engine is not None:
            return self.engine.backend.tokenizer
        if self._tokenizer is None:
            from localeval.judge.llamacpp.llama import Tokenizer, load_model

            self._vocab = load_model(self.model_path, 0, vocab_only=True)
            self._tokenizer = Tokenizer(self._vocab)
        return self._tokenizer

    async def complete(self, request: JudgeRequest) -> JudgeReply:
        if self.engine is None:
            async with self._lock:
                if self.engine is None:
                    self.engine = await (asyncio.to_thread(self._open) if self._loading is None
                                         else asyncio.wrap_future(self._loading))
        return await self.engine.complete(request)

    def close(self) -> None:
        if self._loading is not None:  # a load still under way cannot be stopped: wait for it
            with contextlib.suppress(Exception):
                engine = self._loading.result()
                if self.engine is None:
                    self.engine = engine
            self._loading = None
        if self.engine is not None:
            self.engine.close()
            self.engine = None
        if self._vocab is not None:
            self._vocab.close()
            self._vocab = None


def gpu_offload(n_gpu_layers: int) -> bool:
    """Whether llama.cpp was built with a GPU backend that `n_gpu_layers` uses (no model load)."""
    from localeval.judge.llamacpp.llama import import_llama

    return bool(import_llama().llama_supports_gpu_offload()) and n_gpu_layers != 0
