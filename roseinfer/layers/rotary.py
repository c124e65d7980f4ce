"""Rotary position embeddings (HF "rotate half" layout), with llama3 and linear scaling."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import torch
from torch import nn


def rope_inv_freq(head_dim: int, theta: float, scaling: dict[str, Any] | None) -> torch.Tensor:
    inv_freq = 1.0 / (
        theta ** (torch.arange(0, head_dim, 2, dtype=torch.float64) / head_dim)
    )  # [D/2]
    if not scaling:
        return inv_freq
    kind = scaling.get("rope_type", scaling.get("type", "default"))
    if kind == "linear":
        return inv_freq / float(scaling["factor"])
    if kind == "llama3":
        factor = float(scaling["factor"])
        low = float(scaling.get("low_freq_factor", 1.0))
        high = float(scaling.get("high_freq_factor", 4.0))
        old_len = float(scaling["original_max_position_embeddings"])
        low_wavelen, high_wavelen = old_len / low, old_len / high
        wavelen = 2 * math.pi / inv_freq
        scaled = torch.where(wavelen > low_wavelen, inv_freq / factor, inv_freq)
        smooth = (old_len / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * scaled / factor + smooth * scaled
        is_medium = (wavelen >= high_wavelen) & (wavelen <= low_wavelen)
        return torch.where(is_medium, smoothed, scaled)
    return inv_freq


class RotaryEmbedding(nn.Module):
    """Precomputed cos/sin for every position; applied to q and k in place of HF's rotate_half."""

    cos: torch.Tensor  # [max_positions, D/2] fp32 buffers
    sin: torch.Tensor

    def __init__(
        self, head_dim: int, max_positions: int, theta: float, scaling: dict[str, Any] | None
    ) -> None:
        super().__init__()
        inv_freq = rope_inv_freq(head_dim, theta, scaling)
        freqs = torch.outer(torch.arange(max_positions, dtype=torch.float64), inv_freq)  # [P, D/2]
        self.register_buffer("cos", freqs.cos().float(), persistent=False)
        self.register_buffer("sin", freqs.sin().float(), persistent=False)
        # (the buffers cast, the dtype, the casts), for `tables`
        self._cast: tuple[torch.Tensor, torch.Tensor, torch.dtype, torch.Tensor, torch.Tensor]
        self._cast = (self.cos, self.sin, torch.float32, self.cos, self.sin)

    def forward(self, positions: torch.Tensor, dtype: torch.dtype) -> RotaryTables:
        """The step's tables for positions [N]; computed once per forward, used by every layer
        (each rotates its q and k with the backend's `rotary`)."""
        cos, sin = self.tables(dtype)
        return RotaryTables(cos.index_select(0, positions), sin.index_select(0, positions))

    def tables(self, dtype: torch.dtype) -> tuple[torch.Tensor, torch.Tensor]:
        """cos and sin [max_positions, D/2] in `dtype` (rounded as transformers rounds them),
        cast once rather than a step's rows each step (BENCHMARKS.md, session 27); cast again
        once `to`, `to_empty` or the loader has replaced the buffers."""
        cos, sin, cast_dtype, cos_t, sin_t = self._cast
        if cos is not self.cos or sin is not self.sin or cast_dtype != dtype:
            cos_t, sin_t = self.cos.to(dtype), self.sin.to(dtype)
            self._cast = (self.cos, self.sin, dtype, cos_t, sin_t)
        return cos_t, sin_t


@dataclass(frozen=True)
class RotaryTables:
    cos: torch.Tensor  # [N, D/2], in the activations' dtype (as transformers rounds them)
    sin: torch.Tensor  # [N, D/2]


def rotate(
    q: torch.Tensor,  # [N, H, D]
    k: torch.Tensor,  # [N, KVH, D]
    cos: torch.Tensor,  # [N, D/2]
    sin: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """q and k rotated (new tensors; the `cpu` backend's kernel rotates in place)."""
    cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)  # [N, 1, D/2]
    return apply_rotary(q, cos, sin), apply_rotary(k, cos, sin)


def apply_rotary(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """Rotate x [N, heads, D] in HF's rotate-half layout (in x's dtype, as transformers does)."""
    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat((x1 * cos - x2 * sin, x2 * cos + x1 * sin), dim=-1)
