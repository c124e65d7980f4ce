"""The gated MLP activation: silu(gate) * up over the fused gate_up projection's output."""

from __future__ import annotations

from types import ModuleType

import torch
import torch.nn.functional as F
from torch import nn


class SiluAndMul(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.kernels: ModuleType | None = None  # set by `roseinfer.kernels.attach_cpu_kernels`

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [N, 2I] -> [N, I]
        if self.kernels is not None and x.dim() == 2:
            return self.kernels.silu_and_mul(x)
        gate, up = x.chunk(2, dim=-1)
        return F.silu(gate) * up
