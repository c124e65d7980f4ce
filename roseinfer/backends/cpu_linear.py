"""The `cpu` backend's linear layers: rows go to the C++ kernels (`roseinfer/kernels/`).

Which kernel a layer runs is decided once, when the backend builds it, from what the CPU has:

- bf16 on CPUs with AVX512-BF16 and no AMX (`KernelDpbf16Linear`): `dpbf16_linear` (weights
  packed in pairs of inputs for vdpbf16ps) at every row count, the only copy of the weights.
- other bf16 (`KernelPackedLinear`): up to `kernel_rows` rows, `amx_linear` on CPUs with AMX
  (weights in tiles; up to `AMX_ROWS`, a gated projection's up to `AMX_GATED_ROWS`, prefill
  chunks included; its first `DPBF16_ROWS_ON_AMX` rows to `dpbf16_linear` on a third copy) or
  `small_batch_linear` (up to `SMALL_BATCH_ROWS`); more rows, oneDNN's packed matmul. Both
  stream the weights faster than oneDNN and skip its set-up per call; the price is a second
  copy of the weights.
- int8 (`KernelInt8Linear`): `amx_int8_linear` for bf16 models on CPUs with AMX and
  AVX512-BF16 (out % 16 == 0, in % 32 == 0), up to `VNNI_ROWS_ON_AMX` rows `vnni_int8_linear` on
  a second copy of the weights (in % 64 == 0); else `vnni_int8_linear` on CPUs with AVX512-VNNI
  (activations rounded to int8 per 64 inputs; out % 16 == 0, in % 64 == 0); else the
  weight-only `int8_linear`: any number of rows, except on CPUs with AVX2 and no AVX-512,
  where past `AVX2_KERNEL_ROWS` rows the weight is widened to fp32 for aten's linear.
- on CPUs with AVX2 and no AVX-512, unpacked weights (`KernelDenseLinear`: fp32, bf16, fp16):
  `small_batch_linear` up to `AVX2_KERNEL_ROWS` rows; beyond, oneDNN's matmul on a packed copy of
  an fp32 weight (all but the LM head's, which runs that many rows only for prompt logprobs),
  else aten's fp32 linear (bf16 and fp16 weights widened to fp32 for the call).

`dpbf16_linear`, `vnni_int8_linear` and the AMX kernels pack a gated projection ([gate; up],
the MLP's `gate_up_proj`) so that SiLU·mul comes from the linear's epilogue (`gated_layout`).
Each layer also hands the decoder stack its kernel (`decode_linear`). The weights a layer packs
go into the backend's `HugePageArena` (2 MB pages) when it is given one. Timings: BENCHMARKS.md.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import torch
import torch.nn.functional as F
from torch import nn

from roseinfer.layers.huge_pages import HugePageArena
from roseinfer.layers.linear import Int8Linear, PackedLinear, can_pack_fp32

if TYPE_CHECKING:
    from roseinfer.kernels._ext import CppKernels, DecodeLinear

# Rows up to which the C++ kernels beat oneDNN's packed bf16 matmul (benchmarks/
# small_batch_linear.py; BENCHMARKS.md, "one C++ call per decode step, AMX prefill"):
# small_batch_linear only for a few rows, amx_linear for prefill chunks too, until x outgrows L2.
SMALL_BATCH_ROWS = 4
AMX_ROWS = 1024
# A gated projection's, whose SiLU·mul epilogue overlaps the next rows' tile products: at a
# 2,000-token prompt's step (one step, `--lone-prefill-tokens`) it beats oneDNN's matmul and
# `silu_and_mul` after it (SmolLM2's 30 gate_up 97 against 116 ms; the step 378 against 396 ms),
# where the plain projections on AMX lose 1-6 ms each (BENCHMARKS.md, session 67).
AMX_GATED_ROWS = 4096
# On CPUs without AVX-512 (AVX2), MKL's sgemm catches up with small_batch_linear (bf16) and
# int8_linear near 128 rows, narrow weights widened to fp32 for the call, and is 1.3x faster
# at a 512-token prefill chunk; aten's bf16 and fp16 matmuls there are slower than both at any
# row count (BENCHMARKS.md, sessions 12 and 13). With fp32 weights small_batch_linear (rows
# along the lanes) is level with oneDNN's packed matmul at 32-128 rows and slower beyond
# (sessions 17 and 23).
AVX2_KERNEL_ROWS = 128
# On AMX CPUs `vnni_int8_linear` (x rounded to int8 per 64 inputs, the weights streamed at the
# memory's floor) beats `amx_int8_linear` (its tiles widened to bf16, bound by the widening) in a
# decode step up to about 12 rows: 42 % faster at one row (BENCHMARKS.md, session 35).
VNNI_ROWS_ON_AMX = 12
# Likewise `dpbf16_linear` (vdpbf16ps on weights streamed at the memory's floor) beats
# `amx_linear` (bound by its tile loads at a row or two) in a decode step up to this many rows
# (BENCHMARKS.md, session 65). 0: AMX at every row count, no third copy of the weights.
DPBF16_ROWS_ON_AMX = 2


def placed(t: torch.Tensor, memory: HugePageArena | None) -> torch.Tensor:
    """`t`, copied into `memory` where there is one."""
    return t if memory is None else memory.copy(t)


def dense_kernel_rows(vector_lanes: int) -> int:
    """Rows up to which `small_batch_linear` runs an unpacked weight, given the kernel's vector
    width (`CppKernels.vector_lanes`): 0 leaves the layer to aten."""
    if vector_lanes != 8:
        # Scalar loops lose to aten; on AVX-512 CPUs only packed bf16 was measured against
        # oneDNN, and aten's fp32 already streams at memory speed there (docs/perf_notes.md).
        return 0
    return AVX2_KERNEL_ROWS


class KernelPackedLinear(PackedLinear):
    """bf16: a C++ kernel up to `kernel_rows` rows, oneDNN's packed weights beyond. On CPUs with
    AMX, up to `DPBF16_ROWS_ON_AMX` rows go to `dpbf16_linear` on a third copy of the weights;
    both kernels' copies are packed gated where `gated` (`gated_layout`), SiLU·mul then in
    their epilogue (the AMX one overlapped with the next rows' products: a 512-row chunk's
    gate_up with it 26 % faster than followed by `silu_and_mul`, BENCHMARKS.md, session 66)."""

    def __init__(
        self,
        linear: nn.Linear,
        kernels: CppKernels,
        memory: HugePageArena | None = None,
        gated: bool = False,
    ) -> None:
        super().__init__(linear)
        self.kernels = kernels
        weight = linear.weight.detach()  # [out, in]
        out_features, in_features = weight.shape
        # [out/16, in/32, 16, 32] for amx_linear, else the plain weight for small_batch_linear.
        self.tile_weight: torch.Tensor | None = None
        self.weight: torch.Tensor | None = weight
        self.few_rows_weight: torch.Tensor | None = None  # dpbf16's copy, on AMX CPUs
        if kernels.amx_linear_available() and out_features % 16 == 0 and in_features % 32 == 0:
            gated = gated and gated_layout(linear)
            pack = kernels.amx_pack_gated if gated else kernels.amx_pack_weight
            self.tile_weight = placed(pack(weight), memory)
            self.weight = None
            self.kernel_rows = AMX_GATED_ROWS if gated else AMX_ROWS
            few_rows = None
            if DPBF16_ROWS_ON_AMX > 0 and kernels.dpbf16_linear_available():
                pack = kernels.dpbf16_pack_gated if gated else kernels.dpbf16_pack_weight
                self.few_rows_weight = placed(pack(weight), memory)
                kind = "dpbf16_gated" if gated else "dpbf16"
                few_rows = kernels.DecodeLinear(kind, self.few_rows_weight, None, self.bias)
            self.linear = kernels.DecodeLinear(
                "amx_gated" if gated else "amx",
                self.tile_weight,
                None,
                self.bias,
                DPBF16_ROWS_ON_AMX if few_rows else sys.maxsize,
                few_rows=few_rows,
            )
        else:
            self.kernel_rows = SMALL_BATCH_ROWS
            self.linear = kernels.DecodeLinear("small_batch", weight, None, self.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [..., in] -> [..., out]
        if x.dim() != 2:  # the models pass [N, in]; a few microseconds per call add up
            return self.forward(x.reshape(-1, x.shape[-1])).view(*x.shape[:-1], -1)
        if 0 < x.shape[0] <= self.kernel_rows:
            return self.linear(x.contiguous())
        return self.onednn(x)

    def silu_mul(self, x: torch.Tensor) -> torch.Tensor:  # [..., in] -> [..., out / 2]
        """As `KernelDpbf16Linear.silu_mul`: in the epilogue for the rows our kernels take (AMX's
        and `dpbf16_linear`'s), after oneDNN's matmul beyond them."""
        if x.dim() != 2:
            y = self.silu_mul(x.reshape(-1, x.shape[-1]))
            return y.view(*x.shape[:-1], self.out_features // 2)
        if 0 < x.shape[0] <= self.kernel_rows:
            return self.linear.silu_mul(x.contiguous())
        return self.kernels.silu_and_mul(self.onednn(x))

    def decode_linear(self) -> tuple[DecodeLinear, int]:
        """(the C++ `DecodeLinear` running this layer's kernel, rows up to which it runs)."""
        return self.linear, self.kernel_rows


def gated_layout(linear: nn.Linear) -> bool:
    """Whether a gated projection ([gate; up] stacked, 2I outputs) can be packed in tasks of a
    gate tile and its up tile (16 outputs each): I % 16 == 0. Its plain output is the same
    [..., 2I] either way; `silu_mul` (the decoder stack's and the modules' MLP) then computes
    SiLU(gate) * up in the linear's epilogue instead of a pass of its own over [M, 2I]
    (BENCHMARKS.md, session 29)."""
    return linear.out_features % 32 == 0


class KernelDpbf16Linear(nn.Module):
    """bf16 on CPUs with AVX512-BF16 and no AMX: `dpbf16_linear` at every row count. It beat
    oneDNN's packed matmul from 1 to 2,048 rows (1.5-1.9x at 1-8 rows, 1.26x at 32-64, 1.02x at
    2,048; BENCHMARKS.md, session 25), so the weight is kept once, in its layout
    ([out/16, in/2, 16, 2], the tiles interleaved three at a time)."""

    def __init__(
        self,
        linear: nn.Linear,
        kernels: CppKernels,
        memory: HugePageArena | None = None,
        gated: bool = False,
    ) -> None:
        super().__init__()
        self.out_features = linear.out_features
        weight = linear.weight.detach()
        # A gated projection [gate; up] in tasks of both halves (`gated_layout`): `silu_mul`
        # then runs SiLU·mul in the linear's epilogue.
        gated = gated and gated_layout(linear)
        pack = kernels.dpbf16_pack_gated if gated else kernels.dpbf16_pack_weight
        self.packed_weight = placed(pack(weight), memory)
        self.bias = None if linear.bias is None else linear.bias.detach()
        kind = "dpbf16_gated" if gated else "dpbf16"
        self.linear = kernels.DecodeLinear(kind, self.packed_weight, None, self.bias)

    @staticmethod
    def fits(linear: nn.Linear, kernels: CppKernels) -> bool:
        """Whether this layer runs on `dpbf16_linear` here: bf16, out % 16 == 0, in even, on a
        CPU with AVX512-BF16 where AMX does not take bf16 layers (`amx_linear` is faster)."""
        out_features, in_features = linear.weight.shape
        return (
            linear.weight.dtype == torch.bfloat16
            and linear.weight.device.type == "cpu"
            and kernels.dpbf16_linear_available()
            and not kernels.amx_linear_available()
            and out_features % 16 == 0
            and in_features % 2 == 0
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [..., in] -> [..., out]
        if x.dim() != 2:  # the models pass [N, in]
            y = self.forward(x.reshape(-1, x.shape[-1]))
            return y.view(*x.shape[:-1], self.out_features)
        return self.linear(x.contiguous())

    def silu_mul(self, x: torch.Tensor) -> torch.Tensor:  # [..., in] -> [..., out / 2]
        """SiLU(gate) * up of this gated projection's output: in the epilogue where it was
        packed gated (`gated_layout`), else `silu_and_mul` of the output."""
        if x.dim() != 2:
            y = self.silu_mul(x.reshape(-1, x.shape[-1]))
            return y.view(*x.shape[:-1], self.out_features // 2)
        return self.linear.silu_mul(x.contiguous())

    def decode_linear(self) -> tuple[DecodeLinear, int]:
        """As `KernelPackedLinear.decode_linear`: the same `DecodeLinear`, at any row count."""
        return self.linear, sys.maxsize


class KernelDenseLinear(nn.Module):
    """A weight in its own dtype, unpacked: `small_batch_linear` up to `kernel_rows` rows; beyond,
    oneDNN's matmul on a packed copy of an fp32 weight (`pack_many_rows`), else aten's fp32
    linear (the weight widened for the call where it is narrower). All in the C++
    `DecodeLinear` that the decoder stack runs too."""

    def __init__(
        self, linear: nn.Linear, kernels: CppKernels, kernel_rows: int, pack_many_rows: bool
    ) -> None:
        super().__init__()
        self.weight = linear.weight.detach()  # [out, in]; a tied LM head keeps sharing it
        self.bias = None if linear.bias is None else linear.bias.detach()
        # oneDNN's packed fp32 matmul is 8-18 % faster than sgemm past `kernel_rows` rows here
        # (BENCHMARKS.md, session 23), at the price of a second copy of the weight. Narrower
        # weights keep one copy: packing them would mean an fp32 copy, twice their size.
        self.packed_weight: torch.Tensor | None = None
        if pack_many_rows and self.weight.dtype == torch.float32 and can_pack_fp32():
            self.packed_weight = torch.ops.mkldnn._reorder_linear_weight(self.weight, kernel_rows)
        self.linear = kernels.DecodeLinear(
            "small_batch",
            self.weight,
            None,
            self.bias,
            kernel_rows=kernel_rows,
            packed=self.packed_weight,
        )

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [..., in] -> [..., out]
        if x.dim() != 2:  # the models pass [N, in]
            return self.forward(x.reshape(-1, x.shape[-1])).view(*x.shape[:-1], -1)
        if x.shape[0] == 0:
            return F.linear(x, self.weight, self.bias)
        return self.linear(x.contiguous())

    def decode_linear(self) -> tuple[DecodeLinear, int]:
        """As `KernelPackedLinear.decode_linear`: the same `DecodeLinear`, at any row count."""
        return self.linear, sys.maxsize


class KernelInt8Linear(Int8Linear):
    """int8 weights multiplied by the best C++ int8 kernel this CPU runs (module docstring),
    through the C++ `DecodeLinear` that the decoder stack runs too."""

    def __init__(
        self,
        linear: nn.Linear,
        kernels: CppKernels,
        memory: HugePageArena | None = None,
        gated: bool = False,
    ) -> None:
        super().__init__(linear)
        self.tile_qweight: torch.Tensor | None = None  # [out/16, in/32, 16, 32] int8
        self.vnni_qweight: torch.Tensor | None = None  # [out/16, in/4, 16, 4] uint8 (int8 + 128)
        qweight = self.qweight
        assert qweight is not None  # Int8Linear.__init__ quantized it
        out_features, in_features = qweight.shape
        vnni = kernels.vnni_int8_linear_available() and in_features % 64 == 0
        if (
            self.scale.dtype == torch.bfloat16
            and kernels.amx_int8_linear_available()
            and out_features % 16 == 0
            and in_features % 32 == 0
        ):
            # int8 tiles widened to bf16 next to the AMX tile loads; a few rows go to the VNNI
            # kernel on a second copy of the weights, as on CPUs without AMX.
            tile_gated = gated and gated_layout(linear)
            pack = kernels.amx_pack_gated if tile_gated else kernels.amx_pack_weight
            self.tile_qweight = placed(pack(qweight), memory)
            few_rows = self.vnni_linear(linear, qweight, kernels, memory, gated) if vnni else None
            self.linear = kernels.DecodeLinear(
                "amx_int8_gated" if tile_gated else "amx_int8",
                self.tile_qweight,
                self.scale,
                self.bias,
                VNNI_ROWS_ON_AMX if few_rows else sys.maxsize,
                few_rows=few_rows,
            )
            self.qweight = None
        elif vnni and out_features % 16 == 0:
            self.linear = self.vnni_linear(linear, qweight, kernels, memory, gated)
            self.qweight = None
        else:
            # Streams the weights with software prefetch: faster than aten's kernel at batch 1.
            self.qweight = qweight = placed(qweight, memory)
            kernel_rows = AVX2_KERNEL_ROWS if kernels.vector_lanes() == 8 else sys.maxsize
            self.linear = kernels.DecodeLinear("int8", qweight, self.scale, self.bias, kernel_rows)

    def vnni_linear(
        self,
        linear: nn.Linear,
        qweight: torch.Tensor,
        kernels: CppKernels,
        memory: HugePageArena | None,
        gated: bool,
    ) -> DecodeLinear:
        """The weights packed for `vnni_int8_linear` into `self.vnni_qweight`, and their
        `DecodeLinear`. Bytes times bytes: the fastest int8 path on CPUs without AMX, and for a
        few rows on CPUs with it; a gated projection in tasks of both halves, as
        KernelDpbf16Linear's."""
        gated = gated and gated_layout(linear)
        pack = kernels.vnni_pack_gated if gated else kernels.vnni_pack_weight
        self.vnni_qweight = placed(pack(qweight), memory)
        kind = "vnni_int8_gated" if gated else "vnni_int8"
        return kernels.DecodeLinear(kind, self.vnni_qweight, self.scale, self.bias)

    def forward(self, x: torch.Tensor) -> torch.Tensor:  # [..., in] -> [..., out]
        if x.dim() != 2:  # the models pass [N, in]
            y = self.forward(x.reshape(-1, x.shape[-1]))
            return y.view(*x.shape[:-1], self.out_features)
        if x.shape[0] == 0:  # the AMX kernel wants rows; the others return nothing anyway
            return x.new_empty(0, self.out_features)
        return self.linear(x.contiguous())

    def silu_mul(self, x: torch.Tensor) -> torch.Tensor:  # [..., in] -> [..., out / 2]
        """As `KernelDpbf16Linear.silu_mul`."""
        if x.dim() != 2:
            y = self.silu_mul(x.reshape(-1, x.shape[-1]))
            return y.view(*x.shape[:-1], self.out_features // 2)
        if x.shape[0] == 0:
            return x.new_empty(0, self.out_features // 2)
        return self.linear.silu_mul(x.contiguous())

    def decode_linear(self) -> tuple[DecodeLinear, int]:
        """As `KernelPackedLinear.decode_linear`: the same `DecodeLinear`, at any row count."""
        return self.linear, sys.maxsize
