"""The GGUF files Ollama and llama.cpp users hold: K-quants (Q4_K_M-style mixes of Q4_K and
Q6_K), the other block types, and the qwen2 / qwen3 / mistral architectures.

Every block type is checked bit for bit against gguf-py's reference dequantisation on random
blocks; tiny random models written as GGUF files must load to transformers' own GGUF weights
bit for bit and give its logits.
"""

from __future__ import annotations

import re
import struct

import gguf
import numpy as np
import pytest
import torch
from conftest import prefill_logits
from gguf import GGML_QUANT_SIZES
from gguf import GGMLQuantizationType as Q
from gguf_files import F16_FIELDS, finish, new_writer, random_blocks

from roseinfer.backends import BackendOptions, TorchBackend
from roseinfer.loader import gguf_quants
from roseinfer.loader.gguf import GGUFError, read_gguf
from roseinfer.loader.gguf_quants import dequantize
from roseinfer.models import ModelConfig, build_model

BLOCK_TYPES = list(F16_FIELDS)  # every quantised type we read


def _same_bits(got: np.ndarray, expected: np.ndarray) -> bool:
    return got.dtype == np.float32 and np.array_equal(got.view(np.uint32), expected.view(np.uint32))


@pytest.mark.parametrize("qtype", BLOCK_TYPES, ids=lambda q: q.name)
def test_random_blocks_match_gguf_py(qtype: Q, monkeypatch) -> None:
    # Slabs of 3 K-quant (24 legacy) blocks, so 40 blocks cross several slab seams.
    monkeypatch.setattr(gguf_quants, "_SLAB_VALUES", 3 * 256 + 1)
    raw = random_blocks(qtype, 40, np.random.default_rng(int(qtype)))
    block = GGML_QUANT_SIZES[qtype][0]
    shape = (8, 5 * block)
    expected = gguf.quants.dequantize(raw, qtype).reshape(shape)
    assert np.isfinite(expected).all() and np.unique(expected).size > 10 * 40  # not degenerate
    assert _same_bits(dequantize(raw.reshape(-1), qtype, shape), expected)


# --- tiny models written as GGUF files ----------------------------------------------------

SIZES = dict(vocab=160, hidden=256, ffn=512, layers=2, heads=4, kv_heads=2)  # K rows: 256k wide
CASES = {
    "llama": dict(arch="llama", tie=False, mix="q4_k_m"),
    # llama.cpp writes Mistral 7B / Nemo as "llama"; Nemo's heads are 128 wide, not hidden / heads.
    "mistral_nemo": dict(arch="llama", name="Mistral-Nemo", tie=False, mix="q4_k_m", head_dim=128),
    "qwen2": dict(arch="qwen2", tie=True, mix="q4_k_m"),  # q/k/v biases; tied like Qwen2.5-0.5B
    # q/k norms; heads 128 wide, not hidden / heads (transformers' GGUF Qwen3 assumes 128).
    "qwen3": dict(arch="qwen3", tie=False, mix="q4_k_m", head_dim=128),
    "llama_every_type": dict(arch="llama", tie=False, mix="every"),
}
HF_ARCH = {"llama": "LlamaForCausalLM", "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}


def _tensor_shapes(case: dict) -> dict[str, tuple[int, ...]]:
    """GGUF tensor name -> shape (torch order) for `case`'s model."""
    hidden, ffn, vocab = SIZES["hidden"], SIZES["ffn"], SIZES["vocab"]
    head_dim = case.get("head_dim", hidden // SIZES["heads"])
    q, kv = SIZES["heads"] * head_dim, SIZES["kv_heads"] * head_dim
    shapes: dict[str, tuple[int, ...]] = {
        "token_embd.weight": (vocab, hidden),
        "output_norm.weight": (hidden,),
    }
    if not case["tie"]:
        shapes["output.weight"] = (vocab, hidden)
    for i in range(SIZES["layers"]):
        layer = {
            "attn_norm.weight": (hidden,), "attn_q.weight": (q, hidden),
            "attn_k.weight": (kv, hidden), "attn_v.weight": (kv, hidden),
            "attn_output.weight": (hidden, q), "ffn_norm.weight": (hidden,),
            "ffn_gate.weight": (ffn, hidden), "ffn_up.weight": (ffn, hidden),
            "ffn_down.weight": (hidden, ffn),
        }  # fmt: skip
        if case["arch"] == "qwen2":
            layer |= {"attn_q.bias": (q,), "attn_k.bias": (kv,), "attn_v.bias": (kv,)}
        if case["arch"] == "qwen3":
            layer |= {"attn_q_norm.weight": (head_dim,), "attn_k_norm.weight": (head_dim,)}
        shapes |= {f"blk.{i}.{name}": shape for name, shape in layer.items()}
    return shapes


def _q4_k_m(name: str, tie: bool) -> Q:
    """llama.cpp's llama_tensor_get_type for Q4_K_M, the rules these tensors meet."""
    if name == "output.weight" or (tie and name == "token_embd.weight"):
        return Q.Q6_K
    m = re.fullmatch(r"blk\.(\d+)\.(attn_v|ffn_down)\.weight", name)
    if m is None:
        return Q.Q4_K
    i, n = int(m[1]), SIZES["layers"]
    use_more_bits = i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2
    return Q.Q6_K if use_more_bits else Q.Q4_K


def _write_model(path: str, case: dict) -> set[Q]:
    """Write `case`'s model with random blocks (values within +-0.1); returns the types used."""
    rng = np.random.default_rng(0)
    head_dim = case.get("head_dim", SIZES["hidden"] // SIZES["heads"])
    meta = SIZES | {"key_length": head_dim} | ({"name": case["name"]} if "name" in case else {})
    w = new_writer(path, case["arch"], head_dim, **meta)
    matrices = [name for name, shape in _tensor_shapes(case).items() if len(shape) == 2]
    types = {Q.F32}
    for name, shape in _tensor_shapes(case).items():
        if len(shape) == 1:  # norms around 1, biases around 0: F32, as llama.cpp keeps them
            base = 0.0 if name.endswith(".bias") else 1.0
            w.add_tensor(name, (base + 0.1 * rng.standard_normal(shape)).astype(np.float32))
            continue
        if case["mix"] == "every":
            qtype = BLOCK_TYPES[matrices.index(name) % len(BLOCK_TYPES)]
        else:
            qtype = _q4_k_m(name, case["tie"])
        blocks = random_blocks(qtype, shape[0] * shape[1] // GGML_QUANT_SIZES[qtype][0], rng, 0.1)
        w.add_tensor(name, blocks.reshape(shape[0], -1), raw_dtype=qtype)  # shape from the bytes
        types.add(qtype)
    finish(w)
    return types


@pytest.fixture(scope="module", params=list(CASES))
def loaded(request, tmp_path_factory):
    """(case, path, types written, our config and weights, transformers' model of the file)."""
    import transformers

    case = CASES[request.param]
    path = tmp_path_factory.mktemp(request.param) / "model.gguf"
    types = _write_model(str(path), case)
    cfg, weights = read_gguf(str(path))
    hf = transformers.AutoModelForCausalLM.from_pretrained(
        str(path.parent), gguf_file=path.name, dtype=torch.float32
    ).eval()
    return case, str(path), types, cfg, weights, hf


def test_file_tensors_match_gguf_py(loaded) -> None:
    case, path, types, *_ = loaded
    assert types == ({Q.F32, *BLOCK_TYPES} if case["mix"] == "every" else {Q.F32, Q.Q4_K, Q.Q6_K})
    for t in gguf.GGUFReader(path).tensors:
        expected = gguf.quants.dequantize(t.data, t.tensor_type)
        raw = np.ascontiguousarray(t.data).view(np.uint8).reshape(-1)
        assert _same_bits(dequantize(raw, t.tensor_type, expected.shape), expected), t.name


def test_weights_and_config_match_transformers(loaded) -> None:
    case, _, _, cfg, weights, hf = loaded
    theirs = hf.state_dict()
    assert sorted(weights) == sorted(k for k in theirs if not (case["tie"] and k == "lm_head.weight"))  # fmt: skip
    for name, w in weights.items():  # same bits: both dequantise exactly as gguf-py does
        assert w.dtype == torch.float32 and torch.equal(w, theirs[name]), name
    for key in (
        "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
        "num_key_value_heads", "vocab_size", "tie_word_embeddings", "rms_norm_eps",
    ):  # fmt: skip
        assert cfg[key] == getattr(hf.config, key), key
    hf_head_dim = getattr(hf.config, "head_dim", None)  # Qwen2Config has none: hidden / heads
    assert cfg["head_dim"] == (hf_head_dim or cfg["hidden_size"] // cfg["num_attention_heads"])
    assert cfg["rope_theta"] == hf.config.rope_parameters["rope_theta"]
    ours = ModelConfig.from_hf(cfg)
    assert ours.architecture == HF_ARCH[case["arch"]]
    assert (ours.qkv_bias, ours.qk_norm) == (case["arch"] == "qwen2", case["arch"] == "qwen3")


def test_logits_match_transformers(loaded) -> None:
    case, _, _, cfg, weights, hf = loaded
    model = build_model(ModelConfig.from_hf(cfg), TorchBackend(BackendOptions(torch.device("cpu"))))
    model.load_weights(weights)
    ids = torch.randint(0, SIZES["vocab"], (24,), generator=torch.Generator().manual_seed(1))
    with torch.no_grad():
        expected = hf(ids[None]).logits[0]
    assert float(expected.abs().max()) > 0.5  # not all near zero: the tolerance means something
    torch.testing.assert_close(prefill_logits(model, ids), expected, atol=1e-4, rtol=0)


def test_rows_must_fill_blocks_and_names_fit_the_architecture(tmp_path) -> None:
    path = str(tmp_path / "ragged.gguf")
    w = new_writer(path)
    w.add_tensor("token_embd.weight", np.zeros((8, 64), np.float32))
    blocks = random_blocks(Q.Q4_K, 32, np.random.default_rng(0), 0.1)
    w.add_tensor("blk.0.attn_q.weight", blocks.reshape(32, -1), raw_dtype=Q.Q4_K)  # [32, 256]
    finish(w)
    # The writer only writes whole blocks: make the header say 64 rows of 128 values (GGUF lists
    # dims fastest first), the same bytes but rows no 256-value Q4_K block fits.
    data = (tmp_path / "ragged.gguf").read_bytes()
    name = b"blk.0.attn_q.weight"
    dims = data.index(name) + len(name) + 4  # past the name and its dimension count
    assert data[dims : dims + 16] == struct.pack("<QQ", 256, 32)
    patched = data[:dims] + struct.pack("<QQ", 128, 64) + data[dims + 16 :]
    (tmp_path / "ragged.gguf").write_bytes(patched)
    with pytest.raises(GGUFError, match="attn_q.weight's rows do not fill whole Q4_K blocks"):
        read_gguf(path)

    path = str(tmp_path / "qwen2_with_qk_norm.gguf")
    w = new_writer(path, arch="qwen2")
    w.add_tensor("token_embd.weight", np.zeros((8, 64), np.float32))
    w.add_tensor("blk.0.attn_q_norm.weight", np.ones(16, np.float32))  # Qwen3's, not Qwen2's
    finish(w)
    with pytest.raises(GGUFError, match="unexpected tensor blk.0.attn_q_norm.weight for a qwen2"):
        read_gguf(path)
