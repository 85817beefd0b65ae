"""Write a random-weight GGUF with the exact shape and quantisation mix of a real model, to
measure throughput where the real file cannot be carried (throughput depends on the shape and
the tensor types, not on the weights).

    python scripts/bench/make_synthetic_gguf.py OUT.gguf [--shape qwen2.5-7b|qwen2.5-1.5b|toy]
        [--layers N] [--tokenizer-from GGUF] [--vocab-only] [--seed 0]

`qwen2.5-7b` is Qwen2.5-7B-Instruct in Q4_K_M: 28 layers, 3584 wide, FFN 18944, 28 query / 4
KV heads, vocabulary 152064; tensor types as llama.cpp's Q4_K_M picks them (Q6_K for output,
for attn_v and ffn_down of the "more bits" layers, Q4_K elsewhere, F32 norms and biases).
`qwen2.5-1.5b` is the `small` profile's judge in the same mix (1536 wide, FFN 8960, 12 / 2
heads, vocabulary 151936; its 339 tensors match the real file's names, types and shapes).
`toy` is the same architecture at 2 layers x 256 (for tests).

Valid K-quant blocks are written directly, without quantising anything: each block is random
bytes (any 6-bit scale and 4/6-bit quant is valid) whose fp16 super-block scales (`d`, `dmin`)
are overwritten with small fixed values, so every dequantised weight is finite and small
(|w| < 0.12). Generation is numpy's random bytes plus one strided store per tensor (seconds for
the 7B shape, ~4.7 GB); tensors are streamed to the file one at a time.

The tokenizer: `--tokenizer-from` copies the tokenizer of a GGUF (a Qwen2.5 model, or a
vocab-only GGUF written by `--vocab-only`, a few MB: carry that to a machine without the
model), padding the vocabulary to the shape's. Without it, a byte-level BPE vocabulary with
ChatML special tokens is made up (prompts then take ~3x more tokens than with Qwen's).
Prints one JSON line: path, shape, bytes, tensors, n_vocab, seconds. Needs `pip install gguf`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


@dataclass(frozen=True)
class Shape:
    n_layer: int
    n_embd: int
    n_ff: int
    n_head: int
    n_head_kv: int
    n_vocab: int | None  # None: the tokenizer's size
    n_ctx_train: int = 32768
    rope_freq_base: float = 1_000_000.0
    rms_eps: float = 1e-6


SHAPES = {
    "qwen2.5-7b": Shape(28, 3584, 18944, 28, 4, 152064),
    # the 1.5B coder judge of models/: the 7B's tensor list and type mix (its own Q6_K
    # output.weight), 1536 wide, 12 query / 2 KV heads
    "qwen2.5-1.5b": Shape(28, 1536, 8960, 12, 2, 151936),
    "toy": Shape(2, 256, 512, 4, 2, None, n_ctx_train=4096),
}

CHATML = (
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + "
    "message['content'] + '<|im_end|>' + '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}"
)


def more_bits(layer: int, n_layer: int) -> bool:
    """llama.cpp's use_more_bits(): the layers Q4_K_M gives Q6_K for attn_v and ffn_down."""
    return layer < n_layer // 8 or layer >= 7 * n_layer // 8 or (layer - n_layer // 8) % 3 == 2


def tensor_plan(shape: Shape, n_vocab: int) -> list[tuple[str, tuple[int, ...], str]]:
    """(name, numpy-order shape, type) of every tensor of a qwen2 model, in file order."""
    e, kv = shape.n_embd, shape.n_embd // shape.n_head * shape.n_head_kv
    out: list[tuple[str, tuple[int, ...], str]] = [("token_embd.weight", (n_vocab, e), "Q4_K")]
    for i in range(shape.n_layer):
        big = "Q6_K" if more_bits(i, shape.n_layer) else "Q4_K"
        p = f"blk.{i}."
        out += [
            (p + "attn_norm.weight", (e,), "F32"),
            (p + "attn_q.weight", (e, e), "Q4_K"),
            (p + "attn_q.bias", (e,), "F32"),
            (p + "attn_k.weight", (kv, e), "Q4_K"),
            (p + "attn_k.bias", (kv,), "F32"),
            (p + "attn_v.weight", (kv, e), big),
            (p + "attn_v.bias", (kv,), "F32"),
            (p + "attn_output.weight", (e, e), "Q4_K"),
            (p + "ffn_norm.weight", (e,), "F32"),
            (p + "ffn_gate.weight", (shape.n_ff, e), "Q4_K"),
            (p + "ffn_up.weight", (shape.n_ff, e), "Q4_K"),
            (p + "ffn_down.weight", (e, shape.n_ff), big),
        ]
    out += [("output_norm.weight", (e,), "F32"), ("output.weight", (n_vocab, e), "Q6_K")]
    return out


# bytes per 256-weight super-block, and where its fp16 scales sit
BLOCK = {"Q4_K": 144, "Q6_K": 210}
Q4K_SCALES = np.array([2.0**-13, 2.0**-10], dtype=np.float16).view(np.uint8)  # d, dmin at 0..3
Q6K_SCALE = np.array([2.0**-15], dtype=np.float16).view(np.uint8)  # d at 208..209


def tensor_data(kind: str, dims: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    """Random weights of one tensor: valid K-quant blocks, or F32 (norms 1, biases small)."""
    if kind == "F32":
        return np.ones(dims, dtype=np.float32)
    rows, cols = dims
    if cols % 256:
        raise ValueError(f"row length {cols} is not a multiple of 256 (K-quants need it)")
    per_row = cols // 256 * BLOCK[kind]
    data = np.frombuffer(rng.bytes(rows * per_row), dtype=np.uint8).copy()
    blocks = data.reshape(-1, BLOCK[kind])
    if kind == "Q4_K":
        blocks[:, 0:4] = Q4K_SCALES
    else:
        blocks[:, 208:210] = Q6K_SCALE
    return data.reshape(rows, per_row)


def bias_data(dims: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    return (rng.standard_normal(dims) * 0.01).astype(np.float32)


# ---- tokenizer ------------------------------------------------------------------------------


def byte_vocab() -> dict[str, Any]:
    """GPT-2 byte-level BPE: 256 byte tokens, a few merges, ChatML control tokens."""
    keep = list(range(ord("!"), ord("~") + 1)) + list(range(0xA1, 0xAC + 1))
    keep += list(range(0xAE, 0xFF + 1))
    chars, n = keep[:], 0
    for b in range(256):
        if b not in keep:
            keep.append(b)
            chars.append(256 + n)
            n += 1
    table = dict(zip(keep, (chr(c) for c in chars), strict=True))
    tokens = [table[b] for b in range(256)]
    merges = []
    for a, b in (("Ġ", "t"), ("h", "e"), ("i", "n"), ("Ġ", "a"), ("e", "r")):
        merges.append(f"{a} {b}")
        tokens.append(a + b)
    types = [1] * len(tokens)
    specials = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    tokens += specials
    types += [3] * len(specials)
    return {
        "tokenizer.ggml.model": "gpt2",
        "tokenizer.ggml.pre": "qwen2",
        "tokenizer.ggml.tokens": tokens,
        "tokenizer.ggml.token_type": types,
        "tokenizer.ggml.merges": merges,
        "tokenizer.ggml.eos_token_id": tokens.index("<|im_end|>"),
        "tokenizer.ggml.padding_token_id": tokens.index("<|endoftext|>"),
        "tokenizer.ggml.bos_token_id": tokens.index("<|endoftext|>"),
        "tokenizer.ggml.add_bos_token": False,
        "tokenizer.chat_template": CHATML,
    }


def vocab_from(path: Path) -> dict[str, Any]:
    """The tokenizer.* keys of a GGUF file."""
    from gguf import GGUFReader

    reader = GGUFReader(str(path))
    out = {k: f.contents() for k, f in reader.fields.items() if k.startswith("tokenizer.")}
    if "tokenizer.ggml.tokens" not in out:
        raise SystemExit(f"make_synthetic_gguf: {path} has no tokenizer")
    return out


def padded(vocab: dict[str, Any], n_vocab: int) -> dict[str, Any]:
    tokens, types = list(vocab["tokenizer.ggml.tokens"]), list(vocab["tokenizer.ggml.token_type"])
    if len(tokens) > n_vocab:
        raise SystemExit(f"make_synthetic_gguf: the tokenizer has {len(tokens)} tokens, more "
                         f"than the shape's {n_vocab}")
    tokens += [f"[PAD{i}]" for i in range(len(tokens), n_vocab)]
    types += [5] * (n_vocab - len(types))  # unused
    return {**vocab, "tokenizer.ggml.tokens": tokens, "tokenizer.ggml.token_type": types}


def add_vocab(writer: Any, vocab: dict[str, Any]) -> None:
    from gguf import GGUFValueType as T

    for key, value in vocab.items():
        if isinstance(value, bool):
            writer.add_bool(key, value)
        elif isinstance(value, int):
            writer.add_uint32(key, value)
        elif isinstance(value, float):
            writer.add_float32(key, value)
        elif isinstance(value, str):
            writer.add_string(key, value)
        elif isinstance(value, list) and value and isinstance(value[0], str):
            writer.add_array(key, value)
        elif isinstance(value, list):
            writer.add_key_value(key, [int(v) for v in value], T.ARRAY, sub_type=T.INT32)


# ---- the file -------------------------------------------------------------------------------


def write(out: Path, shape_name: str, layers: int | None, tokenizer: Path | None,
          vocab_only: bool, seed: int) -> dict[str, Any]:
    import gguf

    started = time.perf_counter()
    shape = SHAPES[shape_name]
    if layers is not None:
        shape = Shape(**{**shape.__dict__, "n_layer": layers})
    vocab = vocab_from(tokenizer) if tokenizer else byte_vocab()
    n_vocab = shape.n_vocab or len(vocab["tokenizer.ggml.tokens"])
    vocab = padded(vocab, n_vocab)
    writer = gguf.GGUFWriter(str(out), "qwen2")
    writer.add_name(f"synthetic {shape_name} (random weights)")
    add_vocab(writer, vocab)
    plan = [] if vocab_only else tensor_plan(shape, n_vocab)
    if not vocab_only:
        writer.add_context_length(shape.n_ctx_train)
        writer.add_embedding_length(shape.n_embd)
        writer.add_block_count(shape.n_layer)
        writer.add_feed_forward_length(shape.n_ff)
        writer.add_head_count(shape.n_head)
        writer.add_head_count_kv(shape.n_head_kv)
        writer.add_rope_freq_base(shape.rope_freq_base)
        writer.add_layer_norm_rms_eps(shape.rms_eps)
        writer.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_K_M)
    types = {"Q4_K": gguf.GGMLQuantizationType.Q4_K, "Q6_K": gguf.GGMLQuantizationType.Q6_K}
    for name, dims, kind in plan:
        if kind == "F32":
            writer.add_tensor_info(name, dims, np.dtype(np.float32), 4 * int(np.prod(dims)))
        else:
            nbytes = dims[0] * dims[1] // 256 * BLOCK[kind]
            writer.add_tensor_info(name, (dims[0], nbytes // dims[0]), np.dtype(np.uint8),
                                   nbytes, raw_dtype=types[kind])
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_ti_data_to_file()
    rng = np.random.default_rng(seed)
    for name, dims, kind in plan:  # one tensor in memory at a time
        if name.endswith(".bias"):
            writer.write_tensor_data(bias_data(dims, rng))
        else:
            writer.write_tensor_data(tensor_data(kind, dims, rng))
    writer.close()
    return {
        "path": str(out),
        "shape": shape_name if not vocab_only else "vocab-only",
        "layers": 0 if vocab_only else shape.n_layer,
        "bytes": out.stat().st_size,
        "tensors": len(plan),
        "n_vocab": n_vocab,
        "seconds": round(time.perf_counter() - started, 2),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path)
    parser.add_argument("--shape", choices=sorted(SHAPES), default="qwen2.5-7b")
    parser.add_argument("--layers", type=int, help="override the shape's layer count")
    parser.add_argument("--tokenizer-from", type=Path, help="copy the tokenizer of this GGUF")
    parser.add_argument("--vocab-only", action="store_true", help="write the tokenizer only")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        import gguf  # noqa: F401
    except ImportError:
        print("make_synthetic_gguf: needs the gguf package: pip install gguf", file=sys.stderr)
        return 2
    if args.tokenizer_from is not None and not args.tokenizer_from.is_file():
        print(f"make_synthetic_gguf: {args.tokenizer_from} not found", file=sys.stderr)
        return 2
    if args.layers is not None and args.layers < 1:
        print("make_synthetic_gguf: --layers must be 1 or more", file=sys.stderr)
        return 2
    result = write(args.out, args.shape, args.layers, args.tokenizer_from, args.vocab_only,
                   args.seed)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
