"""Faster CPU linear layers, swapped in after loading; `--enforce-eager` keeps plain `F.linear`.

- `PackedLinear`: bf16 weights reordered once into oneDNN's blocked layout. Eager `F.linear`
  reorders the weight on every call; this is what Inductor's freezing pass does, without
  compiling anything (measured in BENCHMARKS.md). Decode steps and prefill chunks go to a
  C++ kernel instead, which streams the weights faster and without oneDNN's ~25 µs set-up per
  call: `amx_linear` on CPUs with AMX (up to `AMX_ROWS` rows), else `small_batch_linear` (up to
  `SMALL_BATCH_ROWS`). The price is a second copy of the weights in memory.
- `Int8Linear` (`--quantization int8`): int8 weights with one scale per output channel: half
  the bytes of bf16 per decode step. Where the C++ kernels build: `amx_int8_linear` for bf16
  models on CPUs with AMX and AVX512-BF16 (the weight packed into tiles, widened to bf16 as they
  load; any number of rows; out % 16 == 0 and in % 32 == 0); else, on CPUs with AVX512-VNNI (AMD
  Zen 4, Intel Ice Lake; on AMX CPUs for fp32/fp16 models) `vnni_int8_linear`, which also rounds
  the activations to int8 (a scale per 64 inputs, as llama.cpp's q8_0 path) to multiply bytes by
  bytes (out % 16 == 0 and in % 64 == 0); else the weight-only `int8_linear`
  (`roseinfer/kernels/int8_linear.cpp`); without them (and always with `--enforce-eager`) the
  weight-only `aten._weight_int8pack_mm`.
"""

from __future__ import annotations

import sys
from types import ModuleType

import torch
from torch import nn

# Rows up to which the C++ kernels beat oneDNN's packed bf16 matmul: SmolLM2's 120 linears on
# 2 cores (benchmarks/small_batch_linear.py, 2026-11-22, the run before e387460): small_batch_linear 9.4 /
# 11.0 / 13.2 ms at 1 / 4 / 8 rows, oneDNN 12.3 / 12.0 / 12.1; amx_linear 8.4 / 8.4 / 8.4 / 11.3
# ms at 1 / 4 / 8 / 32 rows, oneDNN 12.3 / 12.0 / 12.1 / 15.6. Since its prefill chunks load x as
# non-temporal (2026-11-23, `--rows 70,128,256,512,1024,2048`): amx_linear 15.5 / 18.9 / 28.1 /
# 48.0-48.9 / 116.7 / 320.9 ms at 70 / 128 / 256 / 512 / 1,024 / 2,048 rows, oneDNN 19.4 / 23.9 /
# 31.1 / 63.7-66.5 / 129.2 / 177.1 ms (x outgrows L2 at 2,048). So amx_linear takes prefill
# chunks of up to 1,024 rows (a default step holds 512), and so does the decoder stack.
SMALL_BATCH_ROWS = 4
AMX_ROWS = 1024


class PackedLinear(nn.Module):
    def __init__(self, linear: nn.Linear, batch_hint: int = 32) -> None:
        super().__init__()
        self.out_features = linear.out_features
        weight = linear.weight.detach()
        self.register_buffer(
            "packed_weight", torch.ops.mkldnn._reorder_linear_weight(weight, batch_hint)
        )
        self.bias = None if linear.bias is None else linear.bias.detach()
        # The plain [out, in] weight until `attach_kernels` decides which C++ kernel to use.
        self.weight: torch.Tensor | None = weight
        self.tile_weight: torch.Tensor | None = None  # [out/16, in/32, 16, 32] for amx_linear
        self.kernels: ModuleType | None = None
        self.kernel_rows = 0  # rows up to which a C++ kernel runs; 0: always oneDNN

    def attach_kernels(self, kernels: ModuleType) -> None:
        """Called by `roseinfer.kernels.attach_cpu_kernels`: pick the C++ kernel, pack for it."""
        if self.kernels is not None:  # already attached (the plain weight may be gone)
            return
        self.kernels = kernels
        out_features, in_features = self.weight.shape
        if kernels.amx_linear_available() and out_features % 16 == 0 and in_features % 32 == 0:
            self.tile_weight = kernels.amx_pack_weight(self.weight)
            self.weight = None
            self.kernel_rows = AMX_ROWS
        else:
            self.kernel_rows = SMALL_BATCH_ROWS

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [..., in] -> [..., out]
        if x.dim() != 2:  # the models pass [N, in]; a few microseconds per call add up
            return self.forward(x.reshape(-1, x.shape[-1])).view(*x.shape[:-1], -1)
        if 0 < x.shape[0] <= self.kernel_rows:
            if self.tile_weight is not None:
                return self.kernels.amx_linear(x.contiguous(), self.tile_weight, self.bias)
            return self.kernels.small_batch_linear(x.contiguous(), self.weight, self.bias)
        return torch.ops.mkldnn._linear_pointwise(x, self.packed_weight, self.bias, "none", [], "")

    def decode_linear(self) -> tuple[object, int] | None:
        """(the C++ `DecodeLinear` running this layer's decode kernel, rows up to which it
        runs), or None before `attach_kernels`."""
        if self.kernels is None or self.kernel_rows == 0:
            return None
        if self.tile_weight is not None:
            kind, weight = "amx", self.tile_weight
        else:
            kind, weight = "small_batch", self.weight
        return self.kernels.DecodeLinear(kind, weight, None, self.bias), self.kernel_rows


class Int8Linear(nn.Module):
    def __init__(self, linear: nn.Linear) -> None:
        super().__init__()
        w = linear.weight.detach().float()  # [out, in]
        scale = (w.abs().amax(dim=1) / 127.0).clamp(min=1e-8)  # [out]
        # [out, in] int8 until `attach_kernels` packs it for amx_int8_linear (then None).
        self.register_buffer(
            "qweight", torch.round(w / scale[:, None]).clamp(-127, 127).to(torch.int8)
        )
        self.register_buffer("scale", scale.to(linear.weight.dtype))
        self.bias = None if linear.bias is None else linear.bias.detach()
        self.out_features = linear.out_features
        self.tile_qweight: torch.Tensor | None = None  # [out/16, in/32, 16, 32] int8
        self.vnni_qweight: torch.Tensor | None = None  # [out/16, in/4, 16, 4] uint8 (int8 + 128)
        self.kernels: ModuleType | None = None

    def attach_kernels(self, kernels: ModuleType) -> None:
        """Called by `roseinfer.kernels.attach_cpu_kernels`: AMX tiles where the CPU has them
        (bf16 activations), else the VNNI layout where it has that, else the vector kernel on
        the plain int8 weight."""
        if self.kernels is not None:  # already attached (the plain weight may be gone)
            return
        self.kernels = kernels
        out_features, in_features = self.qweight.shape
        if (
            self.scale.dtype == torch.bfloat16
            and kernels.amx_int8_linear_available()
            and out_features % 16 == 0
            and in_features % 32 == 0
        ):
            self.tile_qweight = kernels.amx_pack_weight(self.qweight)
            self.qweight = None
        elif (
            kernels.vnni_int8_linear_available()
            and out_features % 16 == 0
            and in_features % 64 == 0
        ):
            self.vnni_qweight = kernels.vnni_pack_weight(self.qweight)
            self.qweight = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x2 = x.reshape(-1, x.shape[-1])
        if x2.shape[0] == 0:  # the AMX kernel wants rows; the others return nothing anyway
            return x.new_empty(*x.shape[:-1], self.out_features)
        if self.tile_qweight is not None:
            # int8 tiles widened to bf16 next to the AMX tile loads: 5.7 / 6.3 / 8.2 ms for
            # SmolLM2's 120 linears at 1 / 8 / 32 rows, int8_linear 5.9 / 10.2 / 37.6 ms
            # (benchmarks/small_batch_linear.py, BENCHMARKS.md).
            y = self.kernels.amx_int8_linear(
                x2.contiguous(), self.tile_qweight, self.scale, self.bias
            )
        elif self.vnni_qweight is not None:
            # Bytes times bytes: 4.0 / 13.5 ms for SmolLM2's 120 linears at 1 / 32 rows on an
            # AMD EPYC without AMX, int8_linear 5.9 / 48.7, bf16 oneDNN 11.1 / 23.2 (BENCHMARKS.md).
            y = self.kernels.vnni_int8_linear(
                x2.contiguous(), self.vnni_qweight, self.scale, self.bias
            )
        elif self.kernels is not None:
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

    def decode_linear(self) -> tuple[object, int] | None:
        """As `PackedLinear.decode_linear`: the C++ int8 kernel, at any number of rows."""
        if self.kernels is None:
            return None
        if self.tile_qweight is not None:
            kind, weight = "amx_int8", self.tile_qweight
        elif self.vnni_qweight is not None:
            kind, weight = "vnni_int8", self.vnni_qweight
        else:
            kind, weight = "int8", self.qweight
        linear = self.kernels.DecodeLinear(kind, weight, self.scale, self.bias)
        return linear, sys.maxsize


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
