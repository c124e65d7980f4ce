"""Read a llama, qwen2 or qwen3 GGUF file (llama.cpp's format) as an HF config dict and weights.

`read_gguf(path)` returns what `ModelConfig.from_hf` and `model.load_weights` take: a
`config.json`-style dict and float32 tensors under Hugging Face names, with llama.cpp's rope
permutation of llama's q/k undone, so the result matches `transformers`' own GGUF loader.
`open_gguf(path)` parses the header once for the loader's three readers (weights, sampling
defaults, tokenizer), each of which also takes a path.

The header is parsed here rather than with `gguf.GGUFReader`: the reader builds a numpy view
per tokenizer string and spends ~2 s on SmolLM2's 98k vocabulary and merge strings, more than
the whole load is allowed. `gguf` still supplies the type enums and block sizes. Dequantisation
(`gguf_quants`) is vectorised numpy over a memory map of the file.
"""

from __future__ import annotations

import mmap
import os
import re
import struct
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from gguf import GGML_QUANT_SIZES, GGMLQuantizationType, GGUFValueType

from roseinfer.layers.rotary import rope_inv_freq
from roseinfer.loader.gguf_quants import SUPPORTED_TYPES, dequantize, tensor_nbytes


class GGUFError(ValueError):
    """The file is not a GGUF model roseinfer can read."""


Q = GGMLQuantizationType

# GGUF tensor name (after `blk.N.`) -> HF name (after `model.layers.N.`).
_LAYER_NAMES = {
    "attn_norm": "input_layernorm",
    "ffn_norm": "post_attention_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}
# llama.cpp architecture -> (HF architecture, extra per-layer tensors). Qwen3 adds q/k RMSNorms;
# Qwen2's q/k/v biases need no names of their own. Mistral 7B / Nemo GGUFs say "llama".
_ARCHITECTURES: dict[str, tuple[str, dict[str, str]]] = {
    "llama": ("LlamaForCausalLM", {}),
    "qwen2": ("Qwen2ForCausalLM", {}),
    "qwen3": (
        "Qwen3ForCausalLM",
        {"attn_q_norm": "self_attn.q_norm", "attn_k_norm": "self_attn.k_norm"},
    ),
}
_GLOBAL_NAMES = {"token_embd": "model.embed_tokens", "output_norm": "model.norm", "output": "lm_head"}  # fmt: skip
_SCALAR_FORMATS = {
    GGUFValueType.UINT8: "<B", GGUFValueType.INT8: "<b", GGUFValueType.UINT16: "<H",
    GGUFValueType.INT16: "<h", GGUFValueType.UINT32: "<I", GGUFValueType.INT32: "<i",
    GGUFValueType.FLOAT32: "<f", GGUFValueType.BOOL: "<?", GGUFValueType.UINT64: "<Q",
    GGUFValueType.INT64: "<q", GGUFValueType.FLOAT64: "<d",
}  # fmt: skip


@dataclass
class _Tensor:
    name: str
    shape: tuple[int, ...]  # torch order: GGUF lists dims fastest-first, so reversed
    qtype: int
    offset: int  # from the start of the data section


class _Cursor:
    """Little-endian reads from a buffer; running off its end raises EOFError."""

    def __init__(self, buf: mmap.mmap, pos: int) -> None:
        self.buf, self.pos = buf, pos

    def scalar(self, fmt: str) -> Any:
        size = struct.calcsize(fmt)
        if self.pos + size > len(self.buf):
            raise EOFError
        (value,) = struct.unpack_from(fmt, self.buf, self.pos)
        self.pos += size
        return value

    def string(self) -> str:
        n = self.scalar("<Q")
        if self.pos + n > len(self.buf):
            raise EOFError
        self.pos += n
        return self.buf[self.pos - n : self.pos].decode("utf-8", errors="replace")

    def value(self, vtype: GGUFValueType) -> Any:
        if vtype == GGUFValueType.STRING:
            return self.string()
        if vtype == GGUFValueType.ARRAY:
            item_type, n = self.scalar("<I"), self.scalar("<Q")
            if item_type in _SCALAR_FORMATS:  # numbers in one go: token types and scores are long
                dtype = np.dtype(_SCALAR_FORMATS[item_type])
                if self.pos + n * dtype.itemsize > len(self.buf):
                    raise EOFError
                values = np.frombuffer(self.buf, dtype, count=n, offset=self.pos).tolist()
                self.pos += n * dtype.itemsize
                return values
            return [self.value(item_type) for _ in range(n)]
        if vtype not in _SCALAR_FORMATS:
            raise GGUFError(f"unknown GGUF metadata value type {vtype}")
        return self.scalar(_SCALAR_FORMATS[vtype])


@dataclass(frozen=True)
class GGUFFile:
    """A GGUF file's parsed header over a read-only map of the file (no tensor read yet)."""

    path: str
    metadata: dict[str, Any]  # every key/value, the tokenizer's included
    tensors: list[_Tensor]
    buf: mmap.mmap
    data_start: int  # the data section's offset in the file


def open_gguf(source: str | os.PathLike[str] | GGUFFile) -> GGUFFile:
    """The parsed header of the GGUF file at `source` (one already parsed is returned as is)."""
    return source if isinstance(source, GGUFFile) else _parse(os.fspath(source))


def _parse(path: str) -> GGUFFile:
    try:
        with open(path, "rb") as f:
            buf = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    except FileNotFoundError:
        raise GGUFError(f"GGUF file not found: {path}") from None
    except (OSError, ValueError) as e:  # ValueError: mmap of an empty file
        raise GGUFError(f"cannot read GGUF file {path}: {e}") from None
    if buf[:4] != b"GGUF":
        raise GGUFError(f"{path} is not a GGUF file (bad magic {bytes(buf[:4])!r})")
    cur = _Cursor(buf, pos=4)
    try:
        version = cur.scalar("<I")
        if version not in (2, 3):
            raise GGUFError(f"{path}: unsupported GGUF version {version} (big-endian or too old?)")
        n_tensors, n_kv = cur.scalar("<Q"), cur.scalar("<Q")
        meta = {}
        for _ in range(n_kv):
            key = cur.string()
            meta[key] = cur.value(cur.scalar("<I"))
        tensors = []
        for _ in range(n_tensors):
            name = cur.string()
            dims = [cur.scalar("<Q") for _ in range(cur.scalar("<I"))]
            tensors.append(_Tensor(name, tuple(reversed(dims)), cur.scalar("<I"), cur.scalar("<Q")))
    except EOFError:
        raise GGUFError(f"{path} is truncated (GGUF header ends early)") from None
    align = int(meta.get("general.alignment", 32))
    return GGUFFile(path, meta, tensors, buf, (cur.pos + align - 1) // align * align)


def _unpermute(w: np.ndarray, n_head: int) -> np.ndarray:
    """Undo llama.cpp's q/k row permutation (transformers' `_reverse_permute_weights`)."""
    rows = w.reshape(n_head, w.shape[0] // n_head // 2, 2, *w.shape[1:])  # [head, i, pair, ...]
    return np.ascontiguousarray(rows.swapaxes(1, 2)).reshape(w.shape)


def _hf_name(name: str, arch: str) -> str | None:
    m = re.fullmatch(r"blk\.(\d+)\.(\w+)\.(weight|bias)", name)
    layer_names = {**_LAYER_NAMES, **_ARCHITECTURES[arch][1]}
    if m and m[2] in layer_names:
        return f"model.layers.{m[1]}.{layer_names[m[2]]}.{m[3]}"
    m = re.fullmatch(r"(\w+)\.(weight|bias)", name)
    if m and m[1] in _GLOBAL_NAMES:
        return f"{_GLOBAL_NAMES[m[1]]}.{m[2]}"
    return None


def _llama3_scaling(factors: torch.Tensor, head_dim: int, theta: float) -> dict[str, Any] | None:
    """Recover llama3 `rope_scaling` from llama.cpp's per-frequency `rope_freqs` divisors.

    In the medium band the divisor is 1 / ((1 - s) / factor + s) with
    s = (old_len / wavelen - low) / (high - low), linear in 1 / wavelen; scaling old_len, low
    and high together changes nothing, so fit the line and fix low = 1.
    """
    f = factors.double()
    factor = float(f.max())
    if torch.allclose(f, torch.ones_like(f)):
        return None
    inv_freq = rope_inv_freq(head_dim, theta, None)
    medium = (f > 1 + 1e-6) & (f < factor * (1 - 1e-6))
    if f.numel() != inv_freq.numel() or int(medium.sum()) < 2:
        raise GGUFError("cannot derive llama3 rope scaling from the rope_freqs tensor")
    smooth = (1 / f[medium] - 1 / factor) / (1 - 1 / factor)
    a, b = np.polyfit((inv_freq[medium] / (2 * np.pi)).numpy(), smooth.numpy(), 1)
    scaling = {
        "rope_type": "llama3",
        "factor": factor,
        "low_freq_factor": 1.0,
        "high_freq_factor": round(1 - 1 / b, 4),
        "original_max_position_embeddings": round(-a / b),
    }
    recomputed = rope_inv_freq(head_dim, theta, scaling)
    if b >= 0 or not torch.allclose(recomputed, inv_freq / f, rtol=1e-5):
        raise GGUFError("rope_freqs tensor does not match llama3 rope scaling; cannot load it")
    return scaling


def _config(meta: dict[str, Any], tensors: dict[str, _Tensor], arch: str) -> dict[str, Any]:
    def get(key: str, default: Any = None) -> Any:
        value = meta.get(f"{arch}.{key}", default)
        if value is None:
            raise GGUFError(f"GGUF metadata lacks {arch}.{key}")
        return value

    hidden, heads = get("embedding_length"), get("attention.head_count")
    kv_heads = get("attention.head_count_kv", heads)
    if isinstance(kv_heads, list):  # per-layer list in some files; ours must be uniform
        if len(set(kv_heads)) != 1:
            raise GGUFError(f"per-layer KV head counts {sorted(set(kv_heads))} are not supported")
        kv_heads = kv_heads[0]
    # Qwen3 and Mistral Nemo heads are not hidden / heads wide: key_length says so.
    head_dim = get("attention.key_length", 0) or get("rope.dimension_count", 0) or hidden // heads
    if get("rope.dimension_count", head_dim) != head_dim:
        raise GGUFError("partial rotary (rope.dimension_count != head_dim) is not supported")
    cfg: dict[str, Any] = {
        "architectures": [_ARCHITECTURES[arch][0]],
        "model_type": arch,
        "hidden_size": hidden,
        "intermediate_size": get("feed_forward_length"),
        "num_hidden_layers": get("block_count"),
        "num_attention_heads": heads,
        "num_key_value_heads": kv_heads,
        "head_dim": head_dim,
        "rms_norm_eps": get("attention.layer_norm_rms_epsilon"),
        "rope_theta": get("rope.freq_base", 10000.0),
        "max_position_embeddings": get("context_length"),
        "vocab_size": tensors["token_embd.weight"].shape[0],
        "tie_word_embeddings": "output.weight" not in tensors,
        "bos_token_id": meta.get("tokenizer.ggml.bos_token_id"),
        "eos_token_id": meta.get("tokenizer.ggml.eos_token_id"),
    }
    kind = get("rope.scaling.type", "none")
    factor = get("rope.scaling.factor", 1.0)
    if kind == "linear":
        cfg["rope_scaling"] = {"rope_type": "linear", "factor": float(factor)}
    elif kind != "none" or factor != 1.0:
        raise GGUFError(
            f"unsupported GGUF rope scaling {kind!r} (factor {factor}); roseinfer supports linear and llama3"
        )
    return cfg


def read_gguf_metadata(source: str | os.PathLike[str] | GGUFFile) -> dict[str, Any]:
    """All GGUF key/values (tokenizer included), ~20x faster than `gguf.GGUFReader` on big vocabularies."""
    return open_gguf(source).metadata


# llama.cpp's sampling metadata (`general.sampling.*`, which its converter writes from a model's
# generation_config.json) under that file's names, as the engine reads it
_SAMPLING_NAMES = {"temp": "temperature", "top_k": "top_k", "top_p": "top_p", "min_p": "min_p",
                   "penalty_repeat": "repetition_penalty", "penalty_last_n": "penalty_last_n"}  # fmt: skip
SAMPLING_ORIGIN = "GGUF general.sampling metadata"


# llama.cpp's default sampler order, as /completion runs it (penalties, top-k, top-p, min-p, the
# temperature last), in its letters without those of samplers this engine has not (held neutral)
_LLAMACPP_CHAIN = "ekpmt"


def _runs_as(sequence: Any) -> Any:
    """A `sequence` of llama.cpp's sampler letters without those held neutral here."""
    return (
        sequence.translate(str.maketrans("", "", "dysxa"))
        if isinstance(sequence, str)
        else sequence
    )


def gguf_generation_config(meta: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """A GGUF's sampling defaults as generation_config.json would give them, and a line for
    each of its other sampling keys this engine cannot apply (llama.cpp's own samplers, its
    sampler order): a start-up warning, not a silent drop."""
    key = "general.sampling."
    given = {k.removeprefix(key): v for k, v in meta.items() if k.startswith(key)}
    # (llama.cpp reads them as floats: 0.6, not float32's 0.6000000238418579)
    config = {_SAMPLING_NAMES[k]: float(str(np.float32(v))) if isinstance(v, float) else v
              for k, v in given.items() if k in _SAMPLING_NAMES}  # fmt: skip
    unapplied = []
    if given.get("mirostat", 0) != 0:
        unapplied.append(f"mirostat {given['mirostat']} (this engine has no mirostat sampling)")
    if given.get("xtc_probability", 0) != 0:
        unapplied.append(
            f"xtc_probability {given['xtc_probability']} (not a default here: "
            "a request's own xtc_probability runs XTC)"
        )
    if "sequence" in given and _runs_as(given["sequence"]) != _LLAMACPP_CHAIN:
        unapplied.append(f"sequence {given['sequence']!r} (the sampler order: /completion runs "
                         "llama.cpp's default chain, /v1 vLLM's, unless a request's `samplers` "
                         "says otherwise)")  # fmt: skip
    return config, [f"{key}{line}" for line in unapplied]


def read_gguf(
    source: str | os.PathLike[str] | GGUFFile,
) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """Return (an HF-style config.json dict, HF-named float32 weights) for a llama, qwen2 or
    qwen3 GGUF file."""
    gguf_file = open_gguf(source)
    path, meta, infos = gguf_file.path, gguf_file.metadata, gguf_file.tensors
    buf, data_start = gguf_file.buf, gguf_file.data_start
    arch = meta.get("general.architecture")
    if arch not in _ARCHITECTURES:
        raise GGUFError(
            f"{path}: GGUF architecture {arch!r} is not supported (only {', '.join(map(repr, _ARCHITECTURES))})"
        )
    by_name = {t.name: t for t in infos}
    if "token_embd.weight" not in by_name:
        raise GGUFError(f"{path}: no token_embd.weight tensor")
    cfg = _config(meta, by_name, arch)
    # Check everything before dequantising anything, so a bad file fails fast.
    for t in infos:
        if t.name != "rope_freqs.weight" and _hf_name(t.name, arch) is None:
            raise GGUFError(f"{path}: unexpected tensor {t.name} for a {arch} model")
        if t.qtype not in SUPPORTED_TYPES:
            type_name = Q(t.qtype).name if t.qtype in {q.value for q in Q} else f"#{t.qtype}"
            raise GGUFError(
                f"tensor {t.name} has type {type_name}; roseinfer dequantises "
                + ", ".join(q.name for q in SUPPORTED_TYPES)
            )
        if t.shape[-1] % GGML_QUANT_SIZES[Q(t.qtype)][0]:
            raise GGUFError(
                f"{path}: tensor {t.name}'s rows do not fill whole {Q(t.qtype).name} blocks"
            )
        if data_start + t.offset + tensor_nbytes(t.shape, t.qtype) > len(buf):
            raise GGUFError(f"{path} is truncated (tensor {t.name} runs past the end of the file)")
    data = np.frombuffer(buf, dtype=np.uint8)
    weights: dict[str, torch.Tensor] = {}
    for t in infos:
        start = data_start + t.offset
        w = dequantize(data[start : start + tensor_nbytes(t.shape, t.qtype)], t.qtype, t.shape)
        if t.name == "rope_freqs.weight":
            scaling = _llama3_scaling(torch.from_numpy(w), cfg["head_dim"], cfg["rope_theta"])
            if scaling is not None:
                if "rope_scaling" in cfg:
                    raise GGUFError(f"{path}: both rope_freqs and {arch}.rope.scaling metadata")
                cfg["rope_scaling"] = scaling
            continue
        # Only llama's converter permutes q/k rows (to llama.cpp's interleaved rope); Qwen's
        # files keep HF's rotate-half order.
        if arch == "llama" and ".attn_q." in t.name:
            w = _unpermute(w, cfg["num_attention_heads"])
        elif arch == "llama" and ".attn_k." in t.name:
            w = _unpermute(w, cfg["num_key_value_heads"])
        name = _hf_name(t.name, arch)
        assert name is not None  # every name was checked with the tensor infos
        weights[name] = torch.from_numpy(w)
    return cfg, weights
