"""`read_gguf`: the embedded SmolLM2 GGUF against transformers' own GGUF loader, plus tiny
GGUF files written here for the round trip, the rope scaling and the error paths."""

from __future__ import annotations

import math
import os
import time

import gguf
import numpy as np
import pytest
import torch
from gguf import GGMLQuantizationType as Q
from gguf_files import TINY, finish, new_writer, tiny_hf_weights, write_tiny

from roseinfer.backends import BackendOptions, TorchBackend
from roseinfer.config import EngineConfig
from roseinfer.loader import gguf as gguf_module
from roseinfer.loader import read_source, smollm2_path
from roseinfer.loader.gguf import GGUFError, read_gguf, read_gguf_metadata
from roseinfer.loader.gguf_quants import dequantize
from roseinfer.loader.gguf_tokenizer import tokenizer_from_gguf
from roseinfer.models import ModelConfig, build_model

SMOLLM2_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"
_TORCH = TorchBackend(BackendOptions(torch.device("cpu")))


def _smollm2_dir() -> str:
    return os.path.dirname(smollm2_path())


@pytest.fixture(scope="module")
def smollm2() -> tuple[dict, dict[str, torch.Tensor], float]:
    path = os.path.join(_smollm2_dir(), SMOLLM2_FILE)
    start = time.perf_counter()
    cfg, weights = read_gguf(path)
    return cfg, weights, time.perf_counter() - start


@pytest.fixture(scope="module")
def transformers_smollm2(smollm2) -> tuple[dict, dict[str, torch.Tensor]]:
    """(config dict, tensors) from transformers' GGUF load of the same file (slow: ~15 s).

    `from_pretrained(gguf_file=...)` insists on `accelerate`, which roseinfer does not depend
    on, so call the function it uses, `load_gguf_checkpoint`. It needs a model only for the
    parameter names: a meta-device one built from our config (a wrong config shows up as
    mismatched names or shapes).
    """
    import transformers
    from transformers.modeling_gguf_pytorch_utils import load_gguf_checkpoint

    with torch.device("meta"):
        model = transformers.LlamaForCausalLM(transformers.LlamaConfig(**smollm2[0]))
    path = os.path.join(_smollm2_dir(), SMOLLM2_FILE)
    parsed = load_gguf_checkpoint(path, return_tensors=True, model_to_load=model)
    return parsed["config"], parsed["tensors"]


def test_smollm2_weights_match_transformers(smollm2, transformers_smollm2) -> None:
    _, ours, seconds = smollm2
    _, theirs = transformers_smollm2
    assert sorted(ours) == sorted(theirs)
    for name, expected in theirs.items():
        got = ours[name]
        assert got.dtype == torch.float32 and got.shape == expected.shape, name
        if not torch.equal(got, expected):  # bit-equal in practice; allow float noise
            torch.testing.assert_close(got, expected.float(), rtol=0, atol=1e-6, msg=name)
    print(f"read_gguf(SmolLM2 Q4_1): {seconds:.2f} s")


def test_smollm2_config_matches_transformers(smollm2, transformers_smollm2) -> None:
    cfg, weights, _ = smollm2
    config, _ = transformers_smollm2
    for key in (
        "hidden_size", "intermediate_size", "num_hidden_layers", "num_attention_heads",
        "num_key_value_heads", "rms_norm_eps", "max_position_embeddings", "vocab_size",
        "head_dim", "tie_word_embeddings", "bos_token_id", "eos_token_id",
    ):  # fmt: skip
        assert cfg[key] == config[key], key
    assert cfg["rope_theta"] == config["rope_theta"]
    assert "rope_scaling" not in cfg
    build_model(ModelConfig.from_hf(cfg), _TORCH).load_weights(weights)


@pytest.mark.parametrize("qtype", [Q.F32, Q.F16, Q.BF16, Q.Q8_0, Q.Q4_0, Q.Q4_1, Q.Q5_0, Q.Q5_1])
def test_dequantize_matches_gguf_py(qtype: Q) -> None:
    x = (np.random.default_rng(0).standard_normal((8, 64)) * 3).astype(np.float32)
    raw = x.astype(np.float16) if qtype == Q.F16 else gguf.quants.quantize(x, qtype)
    expected = gguf.quants.dequantize(raw.view(np.uint8), qtype).reshape(8, 64)
    got = dequantize(raw.view(np.uint8).reshape(-1), qtype, (8, 64))
    assert got.dtype == np.float32 and np.array_equal(got, expected)


# --- tiny GGUF files ------------------------------------------------------------------


@pytest.mark.parametrize("qtype,tie", [(Q.F16, False), (Q.Q8_0, True)])
def test_tiny_round_trip_into_our_model(tmp_path, qtype: Q, tie: bool) -> None:
    hf = tiny_hf_weights(tie)
    path = str(tmp_path / "tiny.gguf")
    write_tiny(path, hf, qtype)
    cfg, weights = read_gguf(path)
    assert cfg["tie_word_embeddings"] is tie and ("lm_head.weight" in weights) is not tie
    assert (cfg["vocab_size"], cfg["head_dim"], cfg["num_key_value_heads"]) == (96, 16, 2)
    assert sorted(weights) == sorted(hf)
    for name, original in hf.items():
        if qtype == Q.F16 and original.ndim == 2:
            torch.testing.assert_close(
                weights[name], original.half().float(), rtol=0, atol=0, msg=name
            )
        else:  # Q8_0 error is at most half a step of max|block| / 127
            torch.testing.assert_close(weights[name], original, rtol=0, atol=1e-3, msg=name)
    build_model(ModelConfig.from_hf(cfg), _TORCH).load_weights(weights)
    # Our header parser agrees with gguf-py's reader on every key.
    reader = gguf.GGUFReader(path)
    meta = read_gguf_metadata(path)
    for key, field in reader.fields.items():
        if not key.startswith("GGUF."):
            assert meta[key] == pytest.approx(field.contents()), key


def _write_minimal(
    path: str, arch: str = "llama", head_dim: int | None = None, **meta: object
) -> gguf.GGUFWriter:
    """Metadata plus a token embedding: enough for read_gguf's config."""
    w = new_writer(path, arch, head_dim, **meta)
    w.add_tensor("token_embd.weight", np.zeros((8, meta.get("hidden", TINY["hidden"])), np.float32))
    return w


def test_unsupported_tensor_type(tmp_path) -> None:
    path = str(tmp_path / "k_quant.gguf")
    w = _write_minimal(path)
    # Raw IQ2_XXS bytes: 66 per 256 values; the writer reads the shape [64, 256] off them.
    w.add_tensor("blk.0.attn_q.weight", np.zeros((64, 66), np.uint8), raw_dtype=Q.IQ2_XXS)
    finish(w)
    expected = (
        "tensor blk.0.attn_q.weight has type IQ2_XXS; roseinfer dequantises F32, F16, BF16, "
        "Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, IQ4_XS, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K$"
    )
    with pytest.raises(GGUFError, match=expected):
        read_gguf(path)


def test_other_architecture(tmp_path) -> None:
    path = str(tmp_path / "gemma.gguf")
    finish(_write_minimal(path, arch="gemma2"))
    expected = r"architecture 'gemma2' is not supported \(only 'llama', 'qwen2', 'qwen3'\)"
    with pytest.raises(GGUFError, match=expected):
        read_gguf(path)


def test_not_gguf_missing_truncated(tmp_path) -> None:
    bad = tmp_path / "model.gguf"
    bad.write_bytes(b"PK\x03\x04 this is a zip, not a gguf")
    with pytest.raises(GGUFError, match="not a GGUF file"):
        read_gguf(str(bad))
    (tmp_path / "empty.gguf").write_bytes(b"")
    with pytest.raises(GGUFError):
        read_gguf(str(tmp_path / "empty.gguf"))
    with pytest.raises(GGUFError, match="not found"):
        read_gguf(str(tmp_path / "nope.gguf"))
    path = tmp_path / "tiny.gguf"
    write_tiny(str(path), tiny_hf_weights(tie=True), Q.F16)
    data = path.read_bytes()
    for cut in (40, len(data) - 100):  # inside the header; inside the last tensor
        (tmp_path / "cut.gguf").write_bytes(data[:cut])
        with pytest.raises(GGUFError, match="truncated"):
            read_gguf(str(tmp_path / "cut.gguf"))


def _llama_cpp_rope_factors(
    head_dim: int, theta: float, factor: float, low: float, high: float, old: int
) -> np.ndarray:
    """convert_hf_to_gguf.py's LlamaModel rope_freqs for llama3 scaling."""
    out = []
    for i in range(0, head_dim, 2):
        wavelen = 2 * math.pi * theta ** (i / head_dim)
        if wavelen < old / high:
            out.append(1.0)
        elif wavelen > old / low:
            out.append(factor)
        else:
            smooth = (old / wavelen - low) / (high - low)
            out.append(1 / ((1 - smooth) / factor + smooth))
    return np.array(out, np.float32)


@pytest.mark.parametrize("head_dim,factor", [(128, 8.0), (64, 32.0)])  # Llama 3.1 8B, Llama 3.2 1B
def test_llama3_rope_freqs_become_rope_scaling(tmp_path, head_dim: int, factor: float) -> None:
    path = str(tmp_path / "llama3.gguf")
    w = _write_minimal(
        path, head_dim=head_dim, hidden=2 * head_dim, heads=2, theta=500000.0, context_length=131072
    )
    w.add_tensor(
        "rope_freqs.weight", _llama_cpp_rope_factors(head_dim, 500000.0, factor, 1.0, 4.0, 8192)
    )
    finish(w)
    cfg, weights = read_gguf(path)
    assert cfg["rope_scaling"] == {
        "rope_type": "llama3", "factor": factor, "low_freq_factor": 1.0,
        "high_freq_factor": 4.0, "original_max_position_embeddings": 8192,
    }  # fmt: skip
    assert "rope_freqs.weight" not in weights and ModelConfig.from_hf(cfg).rope_scaling is not None


def test_rope_scaling_metadata(tmp_path) -> None:
    path = str(tmp_path / "linear.gguf")
    w = _write_minimal(path)
    w.add_rope_scaling_type(gguf.RopeScalingType.LINEAR)
    w.add_rope_scaling_factor(4.0)
    finish(w)
    assert read_gguf(path)[0]["rope_scaling"] == {"rope_type": "linear", "factor": 4.0}

    path = str(tmp_path / "yarn.gguf")
    w = _write_minimal(path)
    w.add_rope_scaling_type(gguf.RopeScalingType.YARN)
    w.add_rope_scaling_factor(4.0)
    finish(w)
    with pytest.raises(GGUFError, match="unsupported GGUF rope scaling 'yarn'"):
        read_gguf(path)

    path = str(tmp_path / "odd_freqs.gguf")
    w = _write_minimal(path)
    w.add_tensor("rope_freqs.weight", np.linspace(1, 3, 8).astype(np.float32)[::-1].copy())
    finish(w)
    with pytest.raises(GGUFError, match="rope"):
        read_gguf(path)


def test_loader_parses_the_header_once(monkeypatch, smollm2) -> None:
    """The weights, the sampling defaults and the tokenizer read one parse of the header (each
    parse ~70 ms for SmolLM2's 98k-token vocabulary), and read what a path gives each."""
    path = os.path.join(_smollm2_dir(), SMOLLM2_FILE)
    parses = []
    parse = gguf_module._parse
    monkeypatch.setattr(gguf_module, "_parse", lambda p: parses.append(p) or parse(p))
    source = read_source(EngineConfig(model=path))
    assert parses == [path]
    cfg, weights, _ = smollm2
    assert source.hf_config == cfg and sorted(source.weights) == sorted(weights)
    assert all(torch.equal(source.weights[name], w) for name, w in weights.items())
    text = "The capital of France is <|im_end|> Paris."
    assert source.tokenizer.encode(text) == tokenizer_from_gguf(path).encode(text)
