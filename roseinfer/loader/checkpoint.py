"""Read a GPT-2 checkpoint saved by the original project's trainer (`--checkpoint-path x.pt`).

Accepted file layouts (`torch.load(path, map_location="cpu", weights_only=True)` must load it):

- a bare state dict, or
- a dict holding the state dict under "model", "model_state_dict" or "state_dict" (anything
  else in it, such as optimizer state or step counters, is ignored).

State dict keys follow HF's `GPT2LMHeadModel`, with or without the "transformer." prefix and
with any "module." (DDP) or "_orig_mod." (torch.compile) prefixes stripped:

    wte.weight                        [vocab, n_embd]
    wpe.weight                        [n_positions, n_embd]
    h.N.ln_1.{weight,bias}            h.N.ln_2.{weight,bias}
    h.N.attn.c_attn.{weight,bias}     h.N.attn.c_proj.{weight,bias}
    h.N.mlp.c_fc.{weight,bias}        h.N.mlp.c_proj.{weight,bias}
    ln_f.{weight,bias}
    lm_head.weight                    optional; must equal wte (GPT-2 ties them)

Projection weights may be in HF's Conv1D layout ([in, out]) or nn.Linear layout ([out, in], as
nanoGPT-style trainers save them). The layout is read off `c_attn.weight`, whose shape is
[n_embd, 3 * n_embd] in Conv1D and [3 * n_embd, n_embd] in Linear, never ambiguous; Linear
weights are transposed so the result is always HF layout. Missing biases (a trainer run with
`bias=False`) are filled with zeros, which is what "no bias" computes.

The config is inferred from the shapes: vocab_size and n_embd from wte, n_positions from wpe,
n_layer from the largest h.N index + 1, n_inner from c_fc. The head count is not visible in any
shape, so n_head comes from a "config" or "model_args" dict saved next to the weights (key
"n_head", "num_heads" or "num_attention_heads"); without one it is n_embd // 64, GPT-2's head
size in every published size.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from typing import Any

import torch


class CheckpointError(ValueError):
    """The file is not a GPT-2 trainer checkpoint roseinfer can read."""


_STATE_KEYS = ("model", "model_state_dict", "state_dict")
_CONFIG_KEYS = ("config", "model_args")
_HEAD_KEYS = ("n_head", "num_heads", "num_attention_heads")
_PROJECTIONS = ("attn.c_attn", "attn.c_proj", "mlp.c_fc", "mlp.c_proj")
_PREFIXES = ("module.", "_orig_mod.")


def _load(path: str) -> Any:
    if not os.path.isfile(path):
        raise CheckpointError(f"checkpoint not found: {path}")
    try:
        return torch.load(path, map_location="cpu", weights_only=True)
    except Exception as e:  # on arbitrary bytes the unpickler raises anything, even KeyError
        lines = [line.strip() for line in str(e).splitlines() if line.strip()] or [""]
        # weights_only refusals bury the offending class in a later line of a long message.
        detail = next((line for line in lines if "Unsupported global" in line), lines[0])
        raise CheckpointError(
            f"{path} is not a loadable torch checkpoint "
            f"(torch.load weights_only=True: {type(e).__name__}: {detail})"
        ) from None


def _find_state_dict(obj: Any) -> tuple[Mapping[str, Any], Mapping[str, Any]]:
    """(state dict, saved config dict or {}) out of what torch.load returned."""
    if not isinstance(obj, Mapping):
        raise CheckpointError(f"checkpoint holds a {type(obj).__name__}, not a dict of weights")
    config: Mapping[str, Any] = {}
    for key in _CONFIG_KEYS:
        if isinstance(obj.get(key), Mapping) and any(k in obj[key] for k in _HEAD_KEYS):
            config = obj[key]
            break
    for key in _STATE_KEYS:
        if isinstance(obj.get(key), Mapping):
            return obj[key], config
    return obj, config


def _canonical(name: str) -> str:
    """'module._orig_mod.transformer.h.0.ln_1.weight' -> 'h.0.ln_1.weight'."""
    changed = True
    while changed:
        changed = False
        for prefix in (*_PREFIXES, "transformer."):
            if name.startswith(prefix):
                name, changed = name[len(prefix) :], True
    return name


def _n_head(config: Mapping[str, Any], n_embd: int) -> int:
    n_head = next((int(config[k]) for k in _HEAD_KEYS if k in config), n_embd // 64)
    if n_head <= 0 or n_embd % n_head:
        raise CheckpointError(f"n_head={n_head} does not divide n_embd={n_embd}")
    return n_head


def read_checkpoint(path: str) -> tuple[dict[str, Any], dict[str, torch.Tensor]]:
    """(HF-style GPT-2 config dict, HF-named weights) from a trainer .pt checkpoint.

    Weights keep the checkpoint's dtype and are named `transformer.…` in Conv1D layout.
    """
    path = os.fspath(path)
    state, saved_config = _find_state_dict(_load(path))
    sd = {_canonical(k): v for k, v in state.items() if isinstance(v, torch.Tensor)}
    # Causal-mask buffers, not weights.
    sd = {k: v for k, v in sd.items() if not k.endswith((".attn.bias", ".attn.masked_bias"))}
    required = ("wte.weight", "wpe.weight", "h.0.attn.c_attn.weight", "h.0.mlp.c_fc.weight")
    if any(k not in sd for k in required):
        some = ", ".join(sorted(sd)[:4]) or "nothing"
        raise CheckpointError(
            f"{path} has no GPT-2 weights (expected {', '.join(required)}; found {some})"
        )
    vocab_size, n_embd = sd["wte.weight"].shape
    layers = {int(m[1]) for k in sd if (m := re.match(r"h\.(\d+)\.", k))}
    n_layer = max(layers) + 1

    linear_layout = tuple(sd["h.0.attn.c_attn.weight"].shape) == (3 * n_embd, n_embd)
    weights: dict[str, torch.Tensor] = {}
    for name, tensor in sd.items():
        if name == "lm_head.weight":
            if not torch.equal(tensor, sd["wte.weight"]):
                raise CheckpointError(
                    f"{path}: lm_head.weight differs from wte.weight; roseinfer's GPT-2 ties them"
                )
            continue
        if linear_layout and name.endswith(tuple(f"{p}.weight" for p in _PROJECTIONS)):
            tensor = tensor.t().contiguous()
        weights[f"transformer.{name}"] = tensor
    # Zero biases for a model trained without them (nn.Linear/LayerNorm with bias=False).
    for i in range(n_layer):
        for part in (*_PROJECTIONS, "ln_1", "ln_2"):
            _fill_bias(weights, f"transformer.h.{i}.{part}")
    _fill_bias(weights, "transformer.ln_f")

    config = {
        "architectures": ["GPT2LMHeadModel"],
        "model_type": "gpt2",
        "vocab_size": vocab_size,
        "n_embd": n_embd,
        "n_positions": sd["wpe.weight"].shape[0],
        "n_layer": n_layer,
        "n_head": _n_head(saved_config, n_embd),
        "n_inner": weights["transformer.h.0.mlp.c_fc.weight"].shape[1],  # Conv1D: [n_embd, n_inner]
        "layer_norm_epsilon": 1e-5,
        "tie_word_embeddings": True,
    }
    if vocab_size > 50256:  # GPT-2 tokenizer's <|endoftext|>, as in HF's GPT2Config
        config["bos_token_id"] = config["eos_token_id"] = 50256
    return config, weights


def _fill_bias(weights: dict[str, torch.Tensor], module: str) -> None:
    weight = weights.get(f"{module}.weight")
    if weight is not None and f"{module}.bias" not in weights:
        # LayerNorm weight is [n]; Conv1D weight is [in, out] and the bias has `out` entries.
        weights[f"{module}.bias"] = weight.new_zeros(weight.shape[-1])
