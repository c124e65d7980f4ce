"""Linear layers in plain PyTorch, swapped in for `nn.Linear` by the backend after loading.

- `PackedLinear`: bf16 weights reordered once into oneDNN's blocked layout. Eager `F.linear`
  reorders the weight on every call; this is what Inductor's freezing pass does, without
  compiling anything (BENCHMARKS.md).
- `Int8Linear` (`--quantization int8`): int8 weights with one scale per output channel: half
  the bytes of bf16 per decode step, multiplied by aten's weight-only `_weight_int8pack_mm`.

The `cpu` backend's subclasses (`roseinfer/backends/cpu_linear.py`) send rows to C++ kernels.
"""

from __future__ import annotations

from collections.abc import Callable

import torch
from torch import nn


class PackedLinear(nn.Module):
    packed_weight: torch.Tensor  # a buffer: the weight in oneDNN's blocked layout

    def __init__(self, linear: nn.Linear, batch_hint: int = 32) -> None:
        super().__init__()
        self.out_features = linear.out_features
        weight = linear.weight.detach()  # [out, in]
        self.register_buffer(
            "packed_weight", torch.ops.mkldnn._reorder_linear_weight(weight, batch_hint)
        )
        self.bias = None if linear.bias is None else linear.bias.detach()

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [..., in] -> [..., out]
        if x.dim() != 2:  # the models pass [N, in]
            return self.forward(x.reshape(-1, x.shape[-1])).view(*x.shape[:-1], -1)
        return self.onednn(x)

    def onednn(self, x: torch.Tensor) -> torch.Tensor:  # [N, in] -> [N, out]
        return torch.ops.mkldnn._linear_pointwise(x, self.packed_weight, self.bias, "none", [], "")


def quantize_int8(weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """weight [out, in] -> (int8 [out, in], scale [out] in weight's dtype), symmetric per row."""
    w = weight.detach().float()
    scale = (w.abs().amax(dim=1) / 127.0).clamp(min=1e-8)  # [out]
    qweight = torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8)
    return qweight, scale.to(weight.dtype)


class Int8Linear(nn.Module):
    # Buffers. `qweight` [out, in] int8; None once a subclass packs it for a kernel of its own.
    qweight: torch.Tensor | None
    scale: torch.Tensor  # [out]

    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        qweight, scale = quantize_int8(linear.weight)
        self.register_buffer("qweight", qweight)
        self.register_buffer("scale", scale)  # [out]
        self.bias = None if linear.bias is None else linear.bias.detach()
        self.out_features = linear.out_features

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [..., in] -> [..., out]
        x2 = x.reshape(-1, x.shape[-1])
        if x2.shape[0] == 0:
            return x.new_empty(*x.shape[:-1], self.out_features)
        if x2.shape[-1] % 16 == 0:
            y = torch.ops.aten._weight_int8pack_mm(x2, self.qweight, self.scale)
        else:  # aten's kernel crashes (SIGSEGV) on in_features not a multiple of 16
            # qweight is set: only `KernelInt8Linear`, with a forward of its own, drops it (no
            # check on the per-layer path).
            y = (x2.float() @ self.qweight.float().T * self.scale.float()).to(x2.dtype)  # type: ignore[union-attr]
        if self.bias is not None:
            y = y + self.bias
        return y.view(*x.shape[:-1], self.out_features)


def can_pack(dtype: torch.dtype, device: torch.device) -> bool:
    """Whether oneDNN can hold this weight prepacked: bf16 on a CPU with AVX-512 (oneDNN's bf16
    reorder raises without AVX512-BW/VL/DQ; there bf16 stays on F.linear)."""
    return (
        device.type == "cpu"
        and dtype == torch.bfloat16
        and torch.backends.mkldnn.is_available()
        and torch.cpu._is_avx512_supported()
    )


def can_pack_fp32() -> bool:
    """Whether oneDNN can hold an fp32 weight prepacked (`torch.ops.mkldnn._reorder_linear_weight`:
    any x86-64 CPU oneDNN runs on)."""
    return torch.backends.mkldnn.is_available()


def replace_linears(model: nn.Module, make: Callable[[nn.Linear], nn.Module]) -> None:
    """Replace each of the model's `nn.Linear` layers in place by `make(linear)`."""
    for parent in list(model.modules()):
        for name, child in list(parent.named_children()):
            if isinstance(child, nn.Linear):
                setattr(parent, name, make(child))
