"""RMSNorm as Llama-family models define it (computed in float32), with an optional residual
add fused in front (vLLM's `fused_add_rms_norm`): one C++ call per norm when kernels are on."""

from __future__ import annotations

from types import ModuleType

import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps
        self.kernels: ModuleType | None = None  # set by `roseinfer.kernels.attach_cpu_kernels`

    def forward(
        self, x: torch.Tensor, residual: torch.Tensor | None = None
    ) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
        """norm(x) [N, dim] (or [N, heads, dim], per head); with `residual`:
        (norm(residual + x), residual + x)."""
        if self.kernels is not None and residual is None and x.dim() in (2, 3):
            return self.kernels.rms_norm(x, self.weight, self.eps)
        if self.kernels is not None and x.dim() == 2:
            # The kernel adds x into `residual` in place: the caller hands it over.
            return self.kernels.add_rms_norm(x, residual, self.weight, self.eps), residual
        if residual is None:
            return self._norm(x)
        residual = residual + x
        return self._norm(residual), residual

    def _norm(self, x: torch.Tensor) -> torch.Tensor:
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + self.eps)
        return self.weight * xf.to(x.dtype)
