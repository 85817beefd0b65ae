"""The judge's residual stream at chosen positions, read in the same decode as the logits.

llama.cpp calls a context's `cb_eval` callback for every node of the compute graph; a callback
that answers "yes" for a tensor gets its data once it is computed. `HiddenTap` answers yes for
`l_out-<il>` (the residual stream after layer il) and `result_norm` (the final normed state,
layer -1), only during a decode it was armed for, and keeps the rows of the batch's outputs. A
context is given a tap only when a learned verifier needs it, so a run without one decodes
exactly as before. The tensors are read with `ggml_backend_tensor_get`, which works for CPU and
GPU buffers alike; splitting the graph at the tapped nodes runs the same kernels in the same
order, so the logits do not change (tests/test_verifier.py checks it).
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

_GGML_TYPE_F32 = 0


def _ggml(llama_cpp: Any) -> ctypes.CDLL:
    lib_dir = Path(llama_cpp.__file__).parent / "lib"
    for name in ("libggml-base.so", "libggml-base.dylib", "ggml-base.dll"):
        if (lib_dir / name).exists():
            lib = ctypes.CDLL(str(lib_dir / name))
            break
    else:  # an install that links ggml into libllama
        lib = ctypes.CDLL(str(next(lib_dir.glob("*llama*"))))
    lib.ggml_get_name.restype = ctypes.c_char_p
    lib.ggml_get_name.argtypes = [ctypes.c_void_p]
    lib.ggml_nelements.restype = ctypes.c_int64
    lib.ggml_nelements.argtypes = [ctypes.c_void_p]
    lib.ggml_backend_tensor_get.restype = None
    lib.ggml_backend_tensor_get.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                                            ctypes.c_size_t]
    return lib


class HiddenTap:
    """A cb_eval callback keeping the output rows of the tapped layers of one decode."""

    def __init__(self, llama_cpp: Any, layers: Sequence[int], n_layer: int, n_embd: int) -> None:
        bad = [il for il in layers if not -1 <= il < n_layer]
        if bad:
            from localeval.errors import ConfigError

            raise ConfigError(f"--layers {','.join(map(str, bad))}: this judge has layers "
                              f"0..{n_layer - 1} (or -1: the final state)")
        self.layers, self.n_embd = list(layers), n_embd
        self._names = {(b"result_norm" if il == -1 else f"l_out-{il}".encode()): il
                       for il in self.layers}
        self._lib = _ggml(llama_cpp)
        self._armed = False
        self._got: dict[int, np.ndarray] = {}
        self.callback = llama_cpp.ggml_backend_sched_eval_callback(self._on_node)

    def _on_node(self, tensor: int, ask: bool, _user: int) -> bool:
        if not self._armed:
            return False
        il = self._names.get(self._lib.ggml_get_name(tensor))
        if il is None:
            return False
        if ask:
            return True
        if ctypes.c_int32.from_address(tensor).value != _GGML_TYPE_F32:
            return True  # not a float tensor: nothing we can read (never the case for these)
        n = int(self._lib.ggml_nelements(tensor))
        data = np.empty(n, dtype=np.float32)
        self._lib.ggml_backend_tensor_get(tensor, data.ctypes.data, 0, n * 4)
        self._got[il] = data.reshape(-1, self.n_embd)
        return True

    def arm(self) -> None:
        self._armed, self._got = True, {}

    def take(self, n_tokens: int, outputs: Sequence[int]) -> np.ndarray:
        """[len(outputs), len(layers) * n_embd]: each output's rows, the layers side by side.
        A tapped tensor holds either every token of the batch (inner layers) or only the
        outputs (the last layer and the final norm, which llama.cpp reduces to them first)."""
        self._armed = False
        parts = []
        for il in self.layers:
            rows = self._got.get(il)
            if rows is None:
                raise RuntimeError(f"layer {il} was not computed in this decode")
            if rows.shape[0] == n_tokens:
                rows = rows[list(outputs)]
            elif rows.shape[0] != len(outputs):
                raise RuntimeError(f"layer {il}: {rows.shape[0]} rows for {n_tokens} tokens "
                                   f"and {len(outputs)} outputs")
            parts.append(rows)
        self._got = {}
        return np.concatenate(parts, axis=1)
