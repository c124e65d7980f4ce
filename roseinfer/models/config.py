"""`ModelConfig`: the architecture of a model, read from a Hugging Face `config.json` dict."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# HF `architectures` name -> our model family.
ARCHITECTURES = {
    "GPT2LMHeadModel": "gpt2",
    "LlamaForCausalLM": "llama",
    "MistralForCausalLM": "llama",
    "Qwen2ForCausalLM": "llama",
    "Qwen3ForCausalLM": "llama",
}


class UnsupportedModelError(ValueError):
    """The model's architecture or weights cannot be loaded by roseinfer."""


@dataclass(frozen=True)
class ModelConfig:
    architecture: str  # HF name, e.g. "LlamaForCausalLM"
    family: str  # "gpt2" | "llama"
    vocab_size: int
    hidden_size: int
    num_layers: int
    num_heads: int
    num_kv_heads: int
    head_dim: int
    intermediate_size: int
    max_position_embeddings: int
    norm_eps: float
    tie_word_embeddings: bool
    rope_theta: float = 10000.0
    rope_scaling: dict[str, Any] | None = None
    qkv_bias: bool = False  # Qwen2
    qk_norm: bool = False  # Qwen3
    bos_token_id: int | None = None
    eos_token_id: int | list[int] | None = None

    @classmethod
    def from_hf(cls, cfg: dict[str, Any]) -> ModelConfig:
        archs = cfg.get("architectures") or []
        arch = next((a for a in archs if a in ARCHITECTURES), None)
        if arch is None:
            model_type = cfg.get("model_type")
            by_type = {
                "gpt2": "GPT2LMHeadModel",
                "llama": "LlamaForCausalLM",
                "mistral": "MistralForCausalLM",
                "qwen2": "Qwen2ForCausalLM",
                "qwen3": "Qwen3ForCausalLM",
            }
            arch = by_type.get(model_type) if isinstance(model_type, str) else None
        if arch is None:
            raise UnsupportedModelError(
                f"unsupported architecture {archs or cfg.get('model_type')!r}; "
                f"roseinfer supports {', '.join(ARCHITECTURES)}"
            )
        family = ARCHITECTURES[arch]
        common: dict[str, Any] = {
            "bos_token_id": cfg.get("bos_token_id"),
            "eos_token_id": cfg.get("eos_token_id"),
        }
        if family == "gpt2":
            hidden = cfg["n_embd"]
            heads = cfg["n_head"]
            return cls(
                architecture=arch,
                family=family,
                vocab_size=cfg["vocab_size"],
                hidden_size=hidden,
                num_layers=cfg["n_layer"],
                num_heads=heads,
                num_kv_heads=heads,
                head_dim=hidden // heads,
                intermediate_size=cfg.get("n_inner") or 4 * hidden,
                max_position_embeddings=cfg.get("n_positions", 1024),
                norm_eps=cfg.get("layer_norm_epsilon", 1e-5),
                tie_word_embeddings=cfg.get("tie_word_embeddings", True),
                **common,
            )
        hidden = cfg["hidden_size"]
        heads = cfg["num_attention_heads"]
        rope_theta = cfg.get("rope_theta")
        rope_scaling = cfg.get("rope_scaling")
        # transformers 5 moved these into `rope_parameters`.
        rope_params = cfg.get("rope_parameters") or {}
        if rope_theta is None:
            rope_theta = rope_params.get("rope_theta", 10000.0)
        if rope_scaling is None and rope_params.get("rope_type", "default") != "default":
            rope_scaling = dict(rope_params)
        if rope_scaling is not None:
            kind = rope_scaling.get("rope_type", rope_scaling.get("type", "default"))
            if kind not in ("default", "llama3", "linear"):
                raise UnsupportedModelError(
                    f"unsupported rope_scaling type {kind!r} (supported: llama3, linear)"
                )
        return cls(
            architecture=arch,
            family=family,
            vocab_size=cfg["vocab_size"],
            hidden_size=hidden,
            num_layers=cfg["num_hidden_layers"],
            num_heads=heads,
            num_kv_heads=cfg.get("num_key_value_heads") or heads,
            head_dim=cfg.get("head_dim") or hidden // heads,
            intermediate_size=cfg["intermediate_size"],
            max_position_embeddings=cfg.get("max_position_embeddings", 2048),
            norm_eps=cfg.get("rms_norm_eps", 1e-6),
            tie_word_embeddings=cfg.get("tie_word_embeddings", False),
            rope_theta=float(rope_theta),
            rope_scaling=rope_scaling,
            qkv_bias=arch == "Qwen2ForCausalLM" or bool(cfg.get("attention_bias", False)),
            qk_norm=arch == "Qwen3ForCausalLM",
            **common,
        )
