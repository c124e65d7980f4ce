"""Model classes of our own, one file per family, built from a `ModelConfig`."""

from __future__ import annotations

from torch import nn

from roseinfer.backends.base import Backend
from roseinfer.models.config import ModelConfig, UnsupportedModelError
from roseinfer.models.gpt2 import GPT2LMHeadModel
from roseinfer.models.llama import LlamaForCausalLM

__all__ = ["ModelConfig", "UnsupportedModelError", "build_model"]


def build_model(cfg: ModelConfig, backend: Backend) -> nn.Module:
    """The model for `cfg`, computing through `backend` (`roseinfer.backends.select_backend`)."""
    return {"gpt2": GPT2LMHeadModel, "llama": LlamaForCausalLM}[cfg.family](cfg, backend)
