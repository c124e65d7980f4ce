"""RMSNorm as Llama-family models define it (computed in float32), with an optional residual
add fused in front (vLLM's `fused_add_rms_norm`). The backend computes it: one C++ call per
norm on the `cpu` backend, `rms_norm` / `add_rms_norm` below on the `torch` one."""

from __future__ import annotations

import torch
from torch import nn

from roseinfer.layers.ops import LayerOps


def rms_norm(x: torch.Tensor, weight: torch.Tensor, eps: float) -> torch.Tensor:
    """norm(x) over the last dim: x [..., dim] -> [..., dim], in x's dtype."""
    xf = x.float()
    xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
    return weight * xf.to(x.dtype)


def add_rms_norm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(norm(residual + x), residual + x) for x, residual [N, dim]."""
    residual = residual + x
    return rms_norm(residual, weight, eps), residual


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float, ops: LayerOps) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps
        self.ops = ops  # the model's backend

    def forward(
        self, x: torch.Tensor, residual: torch.Tensor | None = None
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """norm(x) [N, dim] (or [N, heads, dim], per head); with `residual`:
        (norm(residual + x), residual + x). A backend may add x into `residual` in place: the
        caller hands it over."""
        if residual is None:
            return self.ops.rms_norm(x, self.weight, self.eps)
        return self.ops.add_rms_norm(x, residual, self.weight, self.eps)
