"""The gated MLP activation: silu(gate) * up over the fused gate_up projection's output."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

if TYPE_CHECKING:  # the backends import the layers
    from roseinfer.backends.base import LayerOps


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:  # [..., 2I] -> [..., I]
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate) * up


class SiluAndMul(nn.Module):
    def __init__(self, ops: LayerOps) -> None:
        super().__init__()
        self.ops = ops  # the model's backend

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [N, 2I] -> [N, I]
        return self.ops.silu_mul(x)
