"""`dpbf16_linear` (roseinfer/kernels/dpbf16_linear.cpp): bf16 linears by vdpbf16ps on CPUs with
AVX512-BF16, against the exact product; and the layer the `cpu` backend makes of it where AMX
does not take bf16 layers. Skipped, saying why, on CPUs without AVX512-BF16."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from conftest import assert_tile_tasks
from torch import nn

from roseinfer.backends import BackendOptions, CpuBackend
from roseinfer.backends.cpu_linear import KernelDpbf16Linear, KernelPackedLinear
from roseinfer.kernels import load_cpu_kernels


@pytest.fixture(scope="module")
def kernels():
    k = load_cpu_kernels()
    if k is None or not k.dpbf16_linear_available():
        pytest.skip("no AVX512-BF16 on this CPU (or no C++ kernels): bf16 keeps other kernels")
    return k


def exact(x: torch.Tensor, w: torch.Tensor, b: torch.Tensor | None) -> torch.Tensor:
    y = x.double() @ w.double().T
    return y if b is None else y + b.double()


@pytest.mark.parametrize(
    "rows,in_features,out_features",
    [
        (1, 576, 960),  # one decode row; 20 tasks of 3 tiles
        (3, 2, 16),  # one input pair, one tile
        (8, 70, 32),  # one full row tile; a task of 2 tiles
        (9, 64, 80),  # row tiles of 5 + 4; tasks of 3 + 2 tiles
        (16, 576, 48),  # 8 + 8 rows
        (17, 64, 64),  # 6 + 6 + 5 rows; tasks of 3 + 1 tiles
        (32, 1536, 576),
        (70, 96, 112),  # a prefill chunk: 9 row tiles
        (37, 1000, 48),  # x widened in the threads' shares (from 32K values), 8 values past 16s
    ],
)
@pytest.mark.parametrize("bias", [True, False])
def test_dpbf16_linear_matches_the_exact_product(kernels, rows, in_features, out_features, bias):
    torch.manual_seed(0)
    lin = nn.Linear(in_features, out_features, bias=bias).bfloat16()
    w = lin.weight.detach()
    b = None if lin.bias is None else lin.bias.detach()
    x = torch.randn(rows, in_features).bfloat16()
    packed = kernels.dpbf16_pack_weight(w)
    got = kernels.dpbf16_linear(x, packed, b)
    assert got.shape == (rows, out_features) and got.dtype == torch.bfloat16
    # bf16 products are exact in fp32: only the order of the fp32 sums and the final rounding
    # differ from the exact value (F.linear's own error is of that size too).
    torch.testing.assert_close(got, exact(x, w, b).bfloat16(), atol=2e-2, rtol=1.6e-2)
    torch.testing.assert_close(got, F.linear(x, w, b), atol=2e-2, rtol=1.6e-2)


def test_every_output_and_row_is_its_own_dot_product(kernels):
    """One-hot rows of x pick single weights: each output must be exactly that weight, so a
    mixed-up tile, pair or row shows as a wrong value, not as a small error."""
    n, k = 80, 10  # 5 tiles: a task of 3 and one of 2
    w = (torch.arange(n * k).reshape(n, k) % 251 - 125).bfloat16()
    x = torch.eye(k).bfloat16()  # row i picks input i
    got = kernels.dpbf16_linear(x, kernels.dpbf16_pack_weight(w))
    assert torch.equal(got, w.T.contiguous())
    bias = torch.arange(n).bfloat16()
    assert torch.equal(kernels.dpbf16_linear(x, kernels.dpbf16_pack_weight(w), bias), w.T + bias)


def test_the_packed_layout_is_pairs_of_inputs_of_16_outputs_a_tasks_tiles_interleaved(kernels):
    """Tile n holds inputs 2p, 2p + 1 of outputs 16n..16n + 15; a task's tiles (3, the last task
    what is left: here 5 tiles, a task of 3 and one of 2) are interleaved pair by pair, so the
    task is one stream: [pairs][tiles][16][2]."""
    n_out, k = 80, 6
    w = (torch.arange(n_out * k).reshape(n_out, k) - 240).bfloat16()  # distinct, exact in bf16
    assert_tile_tasks(kernels.dpbf16_pack_weight(w).reshape(-1), w, group=2)


def test_dpbf16_linear_refuses_what_it_cannot_run(kernels):
    w = torch.randn(32, 64).bfloat16()
    packed = kernels.dpbf16_pack_weight(w)
    x = torch.randn(4, 64).bfloat16()
    with pytest.raises(RuntimeError, match="N % 16 == 0 and K even"):
        kernels.dpbf16_pack_weight(torch.zeros(24, 64).bfloat16())
    with pytest.raises(RuntimeError, match="N % 16 == 0 and K even"):
        kernels.dpbf16_pack_weight(torch.zeros(32, 63).bfloat16())
    with pytest.raises(RuntimeError, match="must be bf16"):
        kernels.dpbf16_pack_weight(torch.zeros(32, 64))
    with pytest.raises(RuntimeError, match="x must be contiguous bf16"):
        kernels.dpbf16_linear(x.float(), packed)
    with pytest.raises(RuntimeError, match="x has 32 inputs"):
        kernels.dpbf16_linear(x[:, :32].contiguous(), packed)
    with pytest.raises(RuntimeError, match="must come from dpbf16_pack_weight"):
        kernels.dpbf16_linear(x, w)
    with pytest.raises(RuntimeError, match="bias must be bf16"):
        kernels.dpbf16_linear(x, packed, torch.zeros(32))
    assert kernels.dpbf16_linear(x[:0], packed).shape == (0, 32)


def test_the_layer_runs_the_kernel_at_every_row_count(kernels):
    torch.manual_seed(0)
    lin = nn.Linear(576, 960).bfloat16()
    layer = KernelDpbf16Linear(lin, kernels)
    assert layer.packed_weight.shape == (60, 288, 16, 2)
    for shape in ([1, 576], [2, 3, 576], [300, 576], [0, 576]):
        x = torch.randn(shape).bfloat16()
        want = kernels.dpbf16_linear(x.reshape(-1, 576), layer.packed_weight, layer.bias)
        assert torch.equal(layer(x), want.view(*shape[:-1], 960))
    decode, max_rows = layer.decode_linear()
    assert decode is layer.linear and max_rows > 10**9  # the decoder stack: any step
    assert torch.equal(decode(torch.ones(5, 576).bfloat16()), layer(torch.ones(5, 576).bfloat16()))


def test_the_cpu_backend_picks_it_for_bf16_layers_that_fit(kernels):
    backend = CpuBackend(BackendOptions(torch.device("cpu")), kernels)
    amx = kernels.amx_linear_available()
    made = backend.make_linear(nn.Linear(64, 48).bfloat16(), backend.options.quantization)
    # Where AMX runs bf16 layers, amx_linear stays (faster from 3 rows, dpbf16_linear on a copy
    # below); elsewhere dpbf16_linear.
    assert isinstance(made, KernelPackedLinear if amx else KernelDpbf16Linear)
    odd = backend.make_linear(nn.Linear(64, 40).bfloat16(), backend.options.quantization)
    assert not isinstance(odd, KernelDpbf16Linear)  # 40 outputs: not whole tiles of 16
    fp32 = backend.make_linear(nn.Linear(64, 48), backend.options.quantization)
    assert not isinstance(fp32, KernelDpbf16Linear)
