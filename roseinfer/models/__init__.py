"""Model classes of our own, one file per family, built from a `ModelConfig`."""

from __future__ import annotations

from typing import TypeAlias

from roseinfer.backends.base import Backend
from roseinfer.models.config import ModelConfig, UnsupportedModelError
from roseinfer.models.gpt2 import GPT2LMHeadModel
from roseinfer.models.llama import LlamaForCausalLM

__all__ = ["CausalLMModel", "ModelConfig", "UnsupportedModelError", "build_model"]

# Our model classes: each an nn.Module and a `roseinfer.backends.base.CausalLM`.
CausalLMModel: TypeAlias = GPT2LMHeadModel | LlamaForCausalLM


def build_model(cfg: ModelConfig, backend: Backend) -> CausalLMModel:
    """The model for `cfg`, computing through `backend` (`roseinfer.backends.select_backend`)."""
    classes: dict[str, type[CausalLMModel]] = {"gpt2": GPT2LMHeadModel, "llama": LlamaForCausalLM}
    return classes[cfg.family](cfg, backend)
