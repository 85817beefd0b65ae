"""What the judge engine needs from llama.cpp, and the engine settings that shape its answers
(for the answer cache's key) or its speed (how many sequences by default)."""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np

from localeval.judge.llama import Chunk


class Backend(Protocol):
    """What the engine needs from llama.cpp (LlamaBackend; a fake one in the tests)."""

    n_ctx: int
    n_seq: int
    tokenizer: Any

    def decode(self, chunks: list[Chunk]) -> list[np.ndarray]: ...

    def is_eog(self, token: int) -> bool: ...

    def seq_keep(self, seq_id: int, n: int) -> None: ...

    def seq_copy(self, src: int, dst: int, n: int) -> None: ...

    def grammar(self, gbnf: str) -> Any: ...

    def dist_sampler(self, temperature: float, seed: int) -> Any: ...

    def free_sampler(self, sampler: Any) -> None: ...

    def close(self) -> None: ...


def sampling_key(temperature: float, seed: int, max_chunk: int, min_chunk: int) -> str:
    """The engine settings that change answers, for the answer cache's key."""
    return (f"temperature={temperature};seed={seed};greedy;"
            f"cuts={min_chunk}/{max_chunk};kv=per-sequence;planned=read")


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
