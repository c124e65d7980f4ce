"""Tiny GGUF files for the loader tests, written with gguf-py's writer: llama.cpp's metadata,
its q/k row permutation, a tiny llama's weights (and a byte-level tokenizer for one an engine
can serve), and raw quantised blocks for the types gguf-py cannot quantise."""

from __future__ import annotations

from collections.abc import Callable

import gguf
import numpy as np
import torch
from gguf import GGML_QUANT_SIZES
from gguf import GGMLQuantizationType as Q

TINY = dict(vocab=96, hidden=64, ffn=128, layers=2, heads=4, kv_heads=2)


def new_writer(
    path: str, arch: str = "llama", head_dim: int | None = None, **meta: object
) -> gguf.GGUFWriter:
    """A writer with llama.cpp's model metadata; `meta` overrides TINY's sizes and sets
    `context_length`, `theta`, `key_length` (heads not hidden / heads wide) and `name`.
    With `vocab`, `{arch}.vocab_size` too: transformers needs it when no token list is there."""
    w = gguf.GGUFWriter(path, arch)
    if "name" in meta:
        w.add_name(str(meta["name"]))
    if "vocab" in meta:
        w.add_vocab_size(meta["vocab"])
    hidden, heads = meta.get("hidden", TINY["hidden"]), meta.get("heads", TINY["heads"])
    w.add_context_length(meta.get("context_length", 256))
    w.add_embedding_length(hidden)
    w.add_block_count(meta.get("layers", TINY["layers"]))
    w.add_feed_forward_length(meta.get("ffn", TINY["ffn"]))
    w.add_head_count(heads)
    w.add_head_count_kv(meta.get("kv_heads", TINY["kv_heads"]))
    if "key_length" in meta:
        w.add_key_length(meta["key_length"])
        w.add_value_length(meta["key_length"])
    w.add_rope_dimension_count(head_dim or hidden // heads)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_rope_freq_base(float(meta.get("theta", 10000.0)))
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    return w


def finish(w: gguf.GGUFWriter) -> None:
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def llama_cpp_permute(w: np.ndarray, n_head: int) -> np.ndarray:
    """llama.cpp's convert_hf_to_gguf.py `permute` for q/k rows."""
    return (
        w.reshape(n_head, 2, w.shape[0] // n_head // 2, *w.shape[1:])
        .swapaxes(1, 2)
        .reshape(w.shape)
    )


# Byte offsets of each block's fp16 scales / mins (ggml's block_* structs).
F16_FIELDS = {
    Q.Q8_0: [0], Q.Q4_0: [0], Q.Q4_1: [0, 2], Q.Q5_0: [0], Q.Q5_1: [0, 2],
    Q.IQ4_NL: [0], Q.IQ4_XS: [0],
    Q.Q2_K: [80, 82], Q.Q3_K: [108], Q.Q4_K: [0, 2], Q.Q5_K: [0, 2], Q.Q6_K: [208],
}  # fmt: skip


def _set_f16(raw: np.ndarray, qtype: Q, values: np.ndarray) -> np.ndarray:
    """raw [n, type_size] with its fp16 fields set to values [n, fields] (float16)."""
    out = raw.copy()
    for i, at in enumerate(F16_FIELDS[qtype]):
        out[:, at : at + 2] = values[:, i : i + 1].view(np.uint8)
    return out


def random_blocks(
    qtype: Q, n_blocks: int, rng: np.random.Generator, magnitude: float | None = None
) -> np.ndarray:
    """n_blocks random blocks of `qtype` as uint8 [n_blocks, type_size].

    Without `magnitude`, every fp16 scale is any finite fp16 (subnormals and signs included).
    With it, scales are positive and sized so the values stay within about +-magnitude.
    """
    size = GGML_QUANT_SIZES[qtype][1]
    raw = rng.integers(0, 256, (n_blocks, size), dtype=np.uint8)
    n_fields = len(F16_FIELDS[qtype])
    if magnitude is None:
        bits = rng.integers(0, 0x7C00, (n_blocks, n_fields), dtype=np.uint16)  # exponent < all-ones
        bits |= rng.integers(0, 2, (n_blocks, n_fields), dtype=np.uint16) << 15  # sign
        return _set_f16(raw, qtype, bits.view(np.float16))
    # The values are linear in the scales: measure them with every scale at 1.
    ones = _set_f16(raw, qtype, np.ones((n_blocks, n_fields), np.float16))
    unit = float(np.abs(gguf.quants.dequantize(ones, qtype)).max())
    scales = rng.uniform(0.5, 1.0, (n_blocks, n_fields)) * magnitude / unit
    return _set_f16(raw, qtype, scales.astype(np.float16))


def tiny_hf_weights(tie: bool) -> dict[str, torch.Tensor]:
    """A random tiny llama's weights (TINY's sizes), under transformers' names."""
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=TINY["vocab"], hidden_size=TINY["hidden"], intermediate_size=TINY["ffn"],
        num_hidden_layers=TINY["layers"], num_attention_heads=TINY["heads"],
        num_key_value_heads=TINY["kv_heads"], tie_word_embeddings=tie,
    )  # fmt: skip
    sd = LlamaForCausalLM(config).state_dict()
    return {k: v for k, v in sd.items() if not (tie and k == "lm_head.weight")}


_TO_GGUF = {
    "model.embed_tokens": "token_embd", "model.norm": "output_norm", "lm_head": "output",
    "input_layernorm": "attn_norm", "post_attention_layernorm": "ffn_norm",
    "self_attn.q_proj": "attn_q", "self_attn.k_proj": "attn_k", "self_attn.v_proj": "attn_v",
    "self_attn.o_proj": "attn_output", "mlp.gate_proj": "ffn_gate", "mlp.up_proj": "ffn_up",
    "mlp.down_proj": "ffn_down",
}  # fmt: skip


def gguf_name(hf: str) -> str:
    module, suffix = hf.rsplit(".", 1)
    if module.startswith("model.layers."):
        _, _, i, rest = module.split(".", 3)
        return f"blk.{i}.{_TO_GGUF[rest]}.{suffix}"
    return f"{_TO_GGUF[module]}.{suffix}"


def add_byte_tokenizer(w: gguf.GGUFWriter) -> None:
    """A byte-level BPE tokenizer of TINY's 96 tokens: the 95 printable ASCII characters (in
    GPT-2's byte spelling) and one merge, enough to encode and decode English text."""
    from roseinfer.tokenizer import bytes_to_unicode

    spelling = bytes_to_unicode()
    tokens = [spelling[b] for b in range(32, 127)] + [spelling[32] + "t"]
    assert len(tokens) == TINY["vocab"]
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("default")
    w.add_token_list(tokens)
    w.add_token_types([1] * len(tokens))
    w.add_token_merges([f"{spelling[32]} t"])


def write_tiny(
    path: str, weights: dict[str, torch.Tensor], qtype: Q,
    extra: Callable[[gguf.GGUFWriter], None] | None = None,
) -> None:  # fmt: skip
    """A GGUF of `weights` (`tiny_hf_weights`) in `qtype`, llama.cpp's layout; `extra` adds
    metadata (`add_byte_tokenizer`, sampling keys) before the tensors."""
    w = new_writer(path)
    if extra is not None:
        extra(w)
    for name, tensor in weights.items():
        arr = tensor.numpy()
        if name.endswith("q_proj.weight"):
            arr = llama_cpp_permute(arr, TINY["heads"])
        elif name.endswith("k_proj.weight"):
            arr = llama_cpp_permute(arr, TINY["kv_heads"])
        if arr.ndim == 1:  # llama.cpp keeps norms in F32
            w.add_tensor(gguf_name(name), arr)
        elif qtype == Q.F16:
            w.add_tensor(gguf_name(name), arr.astype(np.float16))
        else:
            w.add_tensor(gguf_name(name), gguf.quants.quantize(arr, qtype), raw_dtype=qtype)
    finish(w)
