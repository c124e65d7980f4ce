"""Faster CPU linear layers, swapped in after loading; `--enforce-eager` keeps plain `F.linear`.

- `PackedLinear`: bf16 weights reordered once into oneDNN's blocked layout. Eager `F.linear`
  reorders the weight on every call; this is what Inductor's freezing pass does, without
  compiling anything (measured in BENCHMARKS.md). For up to `SMALL_BATCH_ROWS` rows (decode
  at small batch) the C++ kernel streams the plain weight instead, faster than oneDNN there;
  the price is a second copy of the weights in memory (the tied LM head shares the embedding's).
- `Int8Linear` (`--quantization int8`): weight-only int8 with one scale per output channel:
  half the bytes of bf16 per decode step. The C++ kernel (`roseinfer/kernels/int8_linear.cpp`)
  where it builds, else `aten._weight_int8pack_mm` (and always with `--enforce-eager`).
"""

from __future__ import annotations

from types import ModuleType

import torch
from torch import nn

# Rows up to which `small_batch_linear` beats oneDNN's packed bf16 matmul: SmolLM2's 120 decode
# linears on 2 cores (benchmarks/small_batch_linear.py, 2026-11-22) took 11.6 vs 16.8 ms at 1
# row, 14.5 vs 16.5 ms at 4 rows and 20.4 vs 14.2 ms at 8 rows.
SMALL_BATCH_ROWS = 4


class PackedLinear(nn.Module):
    def __init__(self, linear: nn.Linear, batch_hint: int = 32) -> None:
        super().__init__()
        self.out_features = linear.out_features
        weight = linear.weight.detach()
        self.register_buffer(
            "packed_weight", torch.ops.mkldnn._reorder_linear_weight(weight, batch_hint)
        )
        self.register_buffer("weight", weight, persistent=False)  # [out, in], for few rows
        self.bias = None if linear.bias is None else linear.bias.detach()
        self.kernels: ModuleType | None = None  # set by `roseinfer.kernels.attach_cpu_kernels`
        self.small_batch_rows = SMALL_BATCH_ROWS  # 0: always oneDNN (benchmarks compare)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [..., in] -> [..., out]
        if x.dim() != 2:  # the models pass [N, in]; a few microseconds per call add up
            return self.forward(x.reshape(-1, x.shape[-1])).view(*x.shape[:-1], -1)
        if self.kernels is not None and x.shape[0] <= self.small_batch_rows:
            return self.kernels.small_batch_linear(x.contiguous(), self.weight, self.bias)
        return torch.ops.mkldnn._linear_pointwise(x, self.packed_weight, self.bias, "none", [], "")


class Int8Linear(nn.Module):
    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        w = linear.weight.detach().float()  # [out, in]
        scale = (w.abs().amax(dim=1) / 127.0).clamp(min=1e-8)  # [out]
        self.register_buffer(
            "qweight", torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8)
        )
        self.register_buffer("scale", scale.to(linear.weight.dtype))
        self.bias = None if linear.bias is None else linear.bias.detach()
        self.out_features = linear.out_features
        self.kernels: ModuleType | None = None  # set by `roseinfer.kernels.attach_cpu_kernels`

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.reshape(-1, x.shape[-1])
        if self.kernels is not None:
            # Streams the weights with software prefetch: 1.6x aten's kernel at batch 1.
            y = self.kernels.int8_linear(x2.contiguous(), self.qweight, self.scale, self.bias)
        else:
            if x2.shape[-1] % 16 == 0:
                y = torch.ops.aten._weight_int8pack_mm(x2, self.qweight, self.scale)
            else:  # aten's kernel crashes (SIGSEGV) on in_features not a multiple of 16
                y = (x2.float() @ self.qweight.float().T * self.scale.float()).to(x2.dtype)
            if self.bias is not None:
                y = y + self.bias
        return y.view(*x.shape[:-1], self.out_features)


def can_pack(dtype: torch.dtype, device: torch.device) -> bool:
    return device.type == "cpu" and dtype == torch.bfloat16 and torch.backends.mkldnn.is_available()


def optimize_linears(model: nn.Module, quantization: str, enforce_eager: bool) -> None:
    """Replace the model's nn.Linear layers in place: int8 when asked, else packed bf16 on CPU."""
    param = next(model.parameters())
    if quantization == "int8":
        if param.device.type != "cpu":
            raise ValueError("--quantization int8 is implemented for CPU only")
        make = Int8Linear
    elif not enforce_eager and can_pack(param.dtype, param.device):
        make = PackedLinear
    else:
        return
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear):
                setattr(parent, name, make(child))
