"""scripts/bench/make_synthetic_gguf.py: a 2-layer toy of the qwen2 architecture loads in llama.cpp
and decodes; its K-quant blocks dequantise to small finite weights; the 7B plan has the tensors
and types of Qwen2.5-7B-Instruct Q4_K_M."""

from __future__ import annotations

import importlib.util
import os
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "bench" / "make_synthetic_gguf.py"

if os.environ.get("CI"):  # the dev extra has gguf
    import gguf
else:
    gguf = pytest.importorskip("gguf")


def _script():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("make_synthetic_gguf", SCRIPT)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    sys.modules[spec.name] = module  # type: ignore[union-attr] (dataclasses look it up)
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    return module


def test_toy_loads_in_llama_cpp_and_decodes(tmp_path: Path) -> None:
    llama_cpp = pytest.importorskip("llama_cpp")
    out = tmp_path / "toy.gguf"
    assert _script().main([str(out), "--shape", "toy"]) == 0
    llama_cpp.llama_backend_init()
    mparams = llama_cpp.llama_model_default_params()
    mparams.use_extra_bufts = False
    mparams.n_gpu_layers = 0
    model = llama_cpp.llama_model_load_from_file(str(out).encode(), mparams)
    assert model, "llama.cpp could not load the synthetic GGUF"
    try:
        assert llama_cpp.llama_model_n_layer(model) == 2
        assert llama_cpp.llama_model_n_embd(model) == 256
        cparams = llama_cpp.llama_context_default_params()
        cparams.n_ctx, cparams.n_batch = 128, 64
        cparams.n_threads = cparams.n_threads_batch = 1
        ctx = llama_cpp.llama_init_from_model(model, cparams)
        vocab = llama_cpp.llama_model_get_vocab(model)
        n_vocab = llama_cpp.llama_vocab_n_tokens(vocab)
        text = b"<|im_start|>user\nIs Paris in France?<|im_end|>\n<|im_start|>assistant\n"
        tokens = (llama_cpp.llama_token * 64)()
        n = llama_cpp.llama_tokenize(vocab, text, len(text), tokens, 64, False, True)
        assert 10 < n < 64
        batch = llama_cpp.llama_batch_get_one(tokens, n)
        generated = []
        for _ in range(4):
            assert llama_cpp.llama_decode(ctx, batch) == 0
            logits = np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(ctx, -1),
                                           shape=(n_vocab,))
            assert np.isfinite(logits).all() and logits.std() > 0
            generated.append(int(np.argmax(logits)))
            one = (llama_cpp.llama_token * 1)(generated[-1])
            batch = llama_cpp.llama_batch_get_one(one, 1)
        assert all(0 <= t < n_vocab for t in generated)
        llama_cpp.llama_free(ctx)
    finally:
        llama_cpp.llama_model_free(model)


def test_k_quant_blocks_dequantise_to_small_finite_weights() -> None:
    script = _script()
    rng = np.random.default_rng(0)
    for kind, qtype in (("Q4_K", gguf.GGMLQuantizationType.Q4_K),
                        ("Q6_K", gguf.GGMLQuantizationType.Q6_K)):
        data = script.tensor_data(kind, (8, 512), rng)
        weights = gguf.quants.dequantize(data, qtype)
        assert weights.shape == (8, 512)
        assert np.isfinite(weights).all() and 0 < np.abs(weights).max() < 0.13
        assert weights.std() > 1e-3  # random, not constant


def test_the_7b_plan_has_qwen2_5_7b_q4_k_m_tensors() -> None:
    script = _script()
    shape = script.SHAPES["qwen2.5-7b"]
    plan = script.tensor_plan(shape, shape.n_vocab)
    assert len(plan) == 28 * 12 + 3
    kinds = Counter(kind for _, _, kind in plan)
    # llama.cpp's Q4_K_M: Q6_K for output.weight and for attn_v / ffn_down of 14 of 28 layers
    assert kinds == {"Q4_K": 169, "Q6_K": 29, "F32": 141}
    names = dict((name, dims) for name, dims, _ in plan)
    assert names["blk.0.attn_k.weight"] == (512, 3584)
    assert names["blk.27.ffn_down.weight"] == (3584, 18944)
    assert names["output.weight"] == (152064, 3584)
    nbytes = sum(4 * int(np.prod(d)) if k == "F32" else d[0] * d[1] // 256 * script.BLOCK[k]
                 for _, d, k in plan)
    assert 4.6e9 < nbytes < 4.7e9  # the published Q4_K_M file is 4.68 GB
