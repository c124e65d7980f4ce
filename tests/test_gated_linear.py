"""The gated projection's kernels (`dpbf16_gated_linear`, `vnni_int8_gated_linear`,
`amx_gated_linear` over bf16 or int8 tiles): an MLP's
gate_up_proj [gate; up] packed in tasks of a gate tile and its up tile, so that the decoder stack
gets SiLU(gate) * up from the linear's epilogue. Its plain output must be the ungated kernel's,
and its SiLU·mul `silu_and_mul` of that, bit for bit: the stack and the modules then agree
exactly (tests/test_decode_stack.py). Skipped, saying why, where the CPU lacks the instructions."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch
from conftest import assert_tile_tasks
from torch import nn

from roseinfer.backends import BackendOptions, CpuBackend
from roseinfer.backends.cpu_linear import (
    VNNI_ROWS_ON_AMX,
    KernelDpbf16Linear,
    KernelInt8Linear,
    KernelPackedLinear,
    gated_layout,
)
from roseinfer.config import EngineConfig
from roseinfer.engine import InferenceEngine
from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.linear import Int8Linear

KERNELS = load_cpu_kernels()
pytestmark = pytest.mark.skipif(KERNELS is None, reason="no C++ kernels here")


def needs(kind: str) -> None:
    assert KERNELS is not None
    if kind == "dpbf16" and not KERNELS.dpbf16_linear_available():
        pytest.skip("no AVX512-BF16 on this CPU: bf16 keeps other kernels")
    if kind == "vnni" and not KERNELS.vnni_int8_linear_available():
        pytest.skip("no AVX512-VNNI on this CPU: int8 keeps other kernels")
    if kind == "amx" and not KERNELS.amx_linear_available():
        pytest.skip("no AMX on this CPU: bf16 keeps other kernels")
    if kind == "amx_int8" and not KERNELS.amx_int8_linear_available():
        pytest.skip("no AMX with AVX512-BF16 on this CPU: int8 keeps other kernels")


def kernel_pair(
    kind: str, weight: torch.Tensor, scale: torch.Tensor | None
) -> tuple[Callable[..., torch.Tensor], Callable[..., torch.Tensor]]:
    """(plain(x, bias), gated(x, bias, silu_mul)) for weight [2I, K]: bf16 (dpbf16, amx) or
    int8 with its scale (vnni, amx_int8)."""
    k = KERNELS
    assert k is not None
    if kind == "amx":
        plain, gated = k.amx_pack_weight(weight), k.amx_pack_gated(weight)
        return (
            lambda x, b: k.amx_linear(x, plain, b),
            lambda x, b, silu: k.amx_gated_linear(x, gated, None, b, silu),
        )
    if kind == "amx_int8":
        assert scale is not None
        plain, gated = k.amx_pack_weight(weight), k.amx_pack_gated(weight)
        return (
            lambda x, b: k.amx_int8_linear(x, plain, scale, b),
            lambda x, b, silu: k.amx_gated_linear(x, gated, scale, b, silu),
        )
    if kind == "dpbf16":
        plain, gated = k.dpbf16_pack_weight(weight), k.dpbf16_pack_gated(weight)
        return (
            lambda x, b: k.dpbf16_linear(x, plain, b),
            lambda x, b, silu: k.dpbf16_gated_linear(x, gated, b, silu),
        )
    assert scale is not None
    plain, gated = k.vnni_pack_weight(weight), k.vnni_pack_gated(weight)
    return (
        lambda x, b: k.vnni_int8_linear(x, plain, scale, b),
        lambda x, b, silu: k.vnni_int8_gated_linear(x, gated, scale, b, silu),
    )


CASES = [
    ("dpbf16", torch.bfloat16),
    ("vnni", torch.float32),
    ("vnni", torch.bfloat16),
    ("vnni", torch.float16),
    ("amx", torch.bfloat16),
    ("amx_int8", torch.bfloat16),
]


@pytest.mark.parametrize("kind,dtype", CASES)
@pytest.mark.parametrize(
    "rows,in_features,inter",
    [
        (1, 576, 1536),  # SmolLM2's MLP at one decode row: 96 tasks
        (3, 64, 16),  # one task
        (8, 128, 48),  # a full row tile (dpbf16); 3 tasks
        (9, 64, 32),  # row tiles of 5 + 4 (dpbf16); 2 + 4 + 3 (vnni)
        (33, 192, 80),  # past one group of 32 rows (vnni)
        (70, 64, 64),  # a prefill chunk
        (40, 576, 1536),  # amx: two chunks of rows, the first's SiLU·mul during the second's
        (300, 576, 48),  # amx: two blocks of rows
        (530, 64, 48),  # amx: the rows split between the threads
    ],
)
@pytest.mark.parametrize("bias", [True, False])
def test_the_gated_kernel_is_the_plain_one_and_silu_and_mul_bit_for_bit(
    kind, dtype, rows, in_features, inter, bias
):
    needs(kind)
    torch.manual_seed(0)
    lin = nn.Linear(in_features, 2 * inter, bias=bias).to(dtype)
    b = None if lin.bias is None else lin.bias.detach()
    if kind in ("dpbf16", "amx"):
        plain, gated = kernel_pair(kind, lin.weight.detach(), None)
    else:
        q = Int8Linear(lin)
        plain, gated = kernel_pair(kind, q.qweight, q.scale)
    x = torch.randn(rows, in_features).to(dtype)
    want = plain(x, b)  # [rows, 2I]
    got = gated(x, b, False)
    assert got.shape == (rows, 2 * inter) and got.dtype == dtype
    assert torch.equal(got, want)
    fused = gated(x, b, True)
    assert fused.shape == (rows, inter) and fused.dtype == dtype
    assert torch.equal(fused, KERNELS.silu_and_mul(want))


@pytest.mark.parametrize("kind", ["dpbf16", "vnni", "amx"])
def test_the_gated_layout_holds_a_gate_tile_and_its_up_tile_per_task(kind):
    """Task j holds gate outputs 16j.. and up outputs I + 16j.., interleaved as the plain
    packing interleaves a task's tiles ([K/group][2][16][group]); AMX's tiles are the plain
    packing's of those rows, gate block j then up block j."""
    needs(kind)
    inter, k = 48, 64
    n_out = 2 * inter
    if kind == "amx":
        for w in (
            (torch.arange(n_out * k).reshape(n_out, k) % 251 - 125).bfloat16(),
            (torch.arange(n_out * k).reshape(n_out, k) % 255 - 127).to(torch.int8),
        ):
            by_block = w.view(2, inter // 16, 16, k).transpose(0, 1).reshape(n_out, k)
            assert torch.equal(KERNELS.amx_pack_gated(w), KERNELS.amx_pack_weight(by_block))
        return
    if kind == "dpbf16":
        w = (torch.arange(n_out * k).reshape(n_out, k) % 251 - 125).bfloat16()
        flat, want, group = KERNELS.dpbf16_pack_gated(w).reshape(-1), w, 2
    else:
        w = (torch.arange(n_out * k).reshape(n_out, k) % 255 - 127).to(torch.int8)
        flat, group = KERNELS.vnni_pack_gated(w).reshape(-1), 4
        want = (w.to(torch.int16) + 128).to(torch.uint8)
    by_task = want.view(2, inter // 16, 16, k).transpose(0, 1).reshape(n_out, k)
    assert_tile_tasks(flat, by_task, group=group, task_tiles=2)


def test_the_gated_kernels_refuse_what_they_cannot_run():
    needs("dpbf16")
    needs("vnni")
    k = KERNELS
    with pytest.raises(RuntimeError, match="I % 16 == 0"):
        k.dpbf16_pack_gated(torch.zeros(48, 64).bfloat16())  # I = 24
    with pytest.raises(RuntimeError, match="I % 16 == 0"):
        k.vnni_pack_gated(torch.zeros(48, 64, dtype=torch.int8))
    with pytest.raises(RuntimeError, match="K % 64 == 0"):
        k.vnni_pack_gated(torch.zeros(64, 96, dtype=torch.int8))
    with pytest.raises(RuntimeError, match="must be bf16"):
        k.dpbf16_pack_gated(torch.zeros(64, 64))
    # A plain packing of 48 outputs (3 tiles) cannot be read as a gated projection.
    x = torch.randn(2, 64).bfloat16()
    with pytest.raises(RuntimeError, match="I % 16 == 0"):
        k.dpbf16_gated_linear(x, k.dpbf16_pack_weight(torch.zeros(48, 64).bfloat16()))
    with pytest.raises(RuntimeError, match="I % 16 == 0"):
        k.vnni_int8_gated_linear(
            x.float(), k.vnni_pack_weight(torch.zeros(48, 64, dtype=torch.int8)), torch.ones(48)
        )
    packed = k.dpbf16_pack_gated(torch.zeros(64, 64).bfloat16())
    assert k.dpbf16_gated_linear(x[:0], packed, None, True).shape == (0, 32)
    assert k.dpbf16_gated_linear(x[:0], packed).shape == (0, 64)


def test_the_amx_gated_kernel_refuses_what_it_cannot_run():
    needs("amx_int8")
    k = KERNELS
    with pytest.raises(RuntimeError, match="I a multiple of 16"):
        k.amx_pack_gated(torch.zeros(48, 64).bfloat16())  # I = 24
    x = torch.randn(2, 64).bfloat16()
    with pytest.raises(RuntimeError, match="must come from amx_pack_gated"):
        k.amx_gated_linear(x, k.amx_pack_weight(torch.zeros(48, 64).bfloat16()))
    packed = k.amx_pack_gated(torch.zeros(64, 64).bfloat16())
    with pytest.raises(RuntimeError, match="bf16 weights none"):
        k.amx_gated_linear(x, packed, torch.ones(64).bfloat16())
    with pytest.raises(RuntimeError, match="int8 weights take a scale"):
        k.amx_gated_linear(x, k.amx_pack_gated(torch.zeros(64, 64, dtype=torch.int8)))
    assert k.amx_gated_linear(x, packed, None, None, True).shape == (2, 32)
    assert k.amx_gated_linear(x, packed).shape == (2, 64)


@pytest.mark.parametrize("quantization", ["none", "int8"])
def test_an_amx_gated_layer_runs_as_the_plain_one_at_every_row_count(quantization):
    """On AMX CPUs a gate_up_proj's tiles are packed gated: its forward is the plain layer's,
    and SiLU·mul comes from the epilogue, at a decode step's rows (the dpbf16 / VNNI copy), a
    prefill chunk's and past one block of rows; a projection whose halves are not whole tiles
    keeps the plain packing."""
    needs("amx_int8" if quantization == "int8" else "amx")
    torch.manual_seed(0)
    backend = CpuBackend(BackendOptions(torch.device("cpu")), KERNELS)

    def layer(lin: nn.Linear, gated: bool) -> KernelPackedLinear | KernelInt8Linear:
        if quantization == "int8":
            return KernelInt8Linear(lin, KERNELS, gated=gated)
        return KernelPackedLinear(lin, KERNELS, gated=gated)

    for inter, is_gated in ((128, True), (40, False)):
        lin = nn.Linear(576, 2 * inter, bias=True).bfloat16()
        plain, gated = layer(lin, False), layer(lin, True)
        weights = "tile_qweight" if quantization == "int8" else "tile_weight"
        assert torch.equal(getattr(gated, weights), getattr(plain, weights)) is not is_gated
        decode, _ = gated.decode_linear()
        for rows in (1, 5, 40, 300):
            x = torch.randn(rows, 576).bfloat16()
            want = plain(x)
            assert torch.equal(gated(x), want)
            fused = KERNELS.silu_and_mul(want)
            assert torch.equal(decode.silu_mul(x), fused)
            assert torch.equal(backend.gate_up_silu_mul(gated, x), fused)  # the modules' MLP


@pytest.mark.parametrize("quantization", ["none", "int8"])
def test_a_gated_layer_runs_as_the_plain_one_and_its_decode_linear_fuses(quantization):
    """The layer the backend makes of a gate_up_proj: its forward is the plain layer's, and both
    the `DecodeLinear` the stack runs and the backend's `gate_up_silu_mul` (the modules' MLP)
    give `silu_and_mul` of it from the epilogue; a projection whose halves are not whole tiles
    keeps the plain packing, and `silu_mul` still holds."""
    needs("vnni" if quantization == "int8" else "dpbf16")
    if quantization == "none" and KERNELS.amx_linear_available():
        pytest.skip("bf16 layers take the AMX kernel here")
    rows = 5  # on AMX CPUs too, these rows go to an int8 layer's VNNI copy
    assert rows <= VNNI_ROWS_ON_AMX
    torch.manual_seed(0)
    backend = CpuBackend(BackendOptions(torch.device("cpu")), KERNELS)

    def layer(lin: nn.Linear, gated: bool) -> KernelDpbf16Linear | KernelInt8Linear:
        if quantization == "int8":
            return KernelInt8Linear(lin, KERNELS, gated=gated)
        return KernelDpbf16Linear(lin, KERNELS, gated=gated)

    for inter, is_gated in ((128, True), (40, False)):
        lin = nn.Linear(64, 2 * inter, bias=False).bfloat16()
        assert gated_layout(lin) is is_gated
        plain, gated = layer(lin, False), layer(lin, True)
        weights = "vnni_qweight" if quantization == "int8" else "packed_weight"
        assert torch.equal(getattr(gated, weights), getattr(plain, weights)) is not is_gated
        x = torch.randn(5, 64).bfloat16()
        assert torch.equal(gated(x), plain(x))
        decode, _ = gated.decode_linear()
        want = KERNELS.silu_and_mul(plain(x))
        assert torch.equal(decode.silu_mul(x), want)
        assert torch.equal(backend.gate_up_silu_mul(gated, x), want)  # the modules' MLP
        assert torch.equal(gated.silu_mul(x.view(1, rows, 64)), want.view(1, rows, inter))
        assert gated.silu_mul(x[:0]).shape == (0, inter)
        plain_decode, _ = plain.decode_linear()  # any kind: silu_and_mul of its output
        assert torch.equal(plain_decode.silu_mul(x), KERNELS.silu_and_mul(plain(x)))


def test_the_cpu_backend_packs_each_mlp_gate_up_proj_gated(tiny_model_dir):
    """The backend packs the linears the model's stack spec names as gate_up_proj, and only
    those: the model's weights end up where the gated packing puts them."""
    engine = InferenceEngine(
        EngineConfig(model=tiny_model_dir("llama"), dtype="bfloat16", num_kv_blocks=32)
    )
    layer = engine.model.model.layers[0]
    if KERNELS.amx_linear_available():  # bf16 layers take the AMX kernel
        gate_up_layer = layer.mlp.gate_up_proj
        assert isinstance(gate_up_layer, KernelPackedLinear)
        gate_up = gate_up_layer(torch.eye(64).bfloat16()).T.contiguous()  # [2I, 64]
        assert torch.equal(gate_up_layer.tile_weight, KERNELS.amx_pack_gated(gate_up))
        down = layer.mlp.down_proj(torch.eye(128).bfloat16()).T.contiguous()
        assert torch.equal(layer.mlp.down_proj.tile_weight, KERNELS.amx_pack_weight(down))
        return
    needs("dpbf16")
    assert isinstance(layer.mlp.gate_up_proj, KernelDpbf16Linear)
    eye = torch.eye(64).bfloat16()  # row i picks input i: the layer's weight, transposed
    gate_up = layer.mlp.gate_up_proj(eye).T.contiguous()  # [2I, 64]
    assert torch.equal(layer.mlp.gate_up_proj.packed_weight, KERNELS.dpbf16_pack_gated(gate_up))
    down = layer.mlp.down_proj(torch.eye(128).bfloat16()).T.contiguous()
    assert torch.equal(layer.mlp.down_proj.packed_weight, KERNELS.dpbf16_pack_weight(down))
    backend = CpuBackend(BackendOptions(torch.device("cpu")), KERNELS)
    lone = nn.Linear(64, 256).bfloat16()  # not a stack's gate_up_proj: the plain packing
    made = backend.make_linear(lone, backend.options.quantization)
    assert torch.equal(made.packed_weight, KERNELS.dpbf16_pack_weight(lone.weight.detach()))
