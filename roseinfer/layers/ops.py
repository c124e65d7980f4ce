"""What the layers ask of their backend's math (`Backend` implements it): norms, rotary and the
MLP activation, which a backend may compute in its own kernels."""

from __future__ import annotations

from typing import Protocol

import torch
from torch import nn


class LayerOps(Protocol):
    """The fused-op layers' math: norms, rotary, the MLP activation."""

    def rms_norm(self, x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
        """x [N, dim] or [N, heads, dim] -> RMSNorm(x), same shape."""
        ...

    def add_rms_norm(
        self, x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """x, residual [N, dim] -> (RMSNorm(residual + x), residual + x); may update
        `residual` in place."""
        ...

    def rotary(
        self, q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """q [N, H, D], k [N, KVH, D] rotated by cos/sin [N, D/2] (may be in place)."""
        ...

    def silu_mul(self, x: torch.Tensor) -> torch.Tensor:
        """x [N, 2I] = [gate | up] -> silu(gate) * up [N, I]."""
        ...

    def gate_up_silu_mul(self, gate_up: nn.Module, x: torch.Tensor) -> torch.Tensor:
        """`silu_mul(gate_up(x))` for a gated projection this backend made (`make_linear`): x
        [N, hidden] -> [N, I]; a backend may compute it in the projection's epilogue."""
        ...
