"""The gated MLP activation: silu(gate) * up over the fused gate_up projection's output."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from roseinfer.layers.ops import LayerOps


def silu_and_mul(x: torch.Tensor) -> torch.Tensor:  # [..., 2I] -> [..., I]
    gate, up = x.chunk(2, dim=-1)
    return F.silu(gate) * up


class SiluAndMul(nn.Module):
    """SiLU(gate) * up of a gated projection's output [gate | up]: the backend's
    `gate_up_silu_mul`, which may compute it in the projection's epilogue."""

    def __init__(self, ops: LayerOps) -> None:
        super().__init__()
        self.ops = ops  # the model's backend

    def forward(self, gate_up: nn.Module, x: torch.Tensor) -> torch.Tensor:
        return self.ops.gate_up_silu_mul(gate_up, x)  # [N, hidden] -> [N, I]
