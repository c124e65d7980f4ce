"""The linear layers the backends make against plain F.linear."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from roseinfer.backends import BackendOptions, Quantization, TorchBackend
from roseinfer.layers.linear import Int8Linear, PackedLinear, can_pack

CPU = torch.device("cpu")


@pytest.mark.skipif(not can_pack(torch.bfloat16, CPU), reason="no oneDNN bf16")
@pytest.mark.parametrize("batch", [1, 3, 32, 100])
def test_packed_linear_matches_f_linear(batch: int) -> None:
    torch.manual_seed(0)
    lin = nn.Linear(64, 96, bias=True).to(torch.bfloat16)
    x = torch.randn(batch, 64, dtype=torch.bfloat16)
    ref = F.linear(x, lin.weight, lin.bias)
    got = PackedLinear(lin)(x)
    assert got.shape == ref.shape and got.dtype == torch.bfloat16
    torch.testing.assert_close(got.float(), ref.float(), atol=2e-2, rtol=2e-2)


def test_int8_linear_is_close_and_halves_bytes() -> None:
    torch.manual_seed(0)
    lin = nn.Linear(128, 64, bias=True).to(torch.bfloat16)
    x = torch.randn(5, 128, dtype=torch.bfloat16)
    q = Int8Linear(lin)
    assert q.qweight.dtype == torch.int8
    assert (
        q.qweight.numel() * q.qweight.element_size() * 2
        == lin.weight.numel() * lin.weight.element_size()
    )
    ref = F.linear(x.float(), lin.weight.float(), lin.bias.float())
    err = (q(x).float() - ref).abs().max() / ref.abs().max()
    assert err < 0.03


def test_torch_backend_linears_respect_enforce_eager_and_fp32() -> None:
    model = nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 8)).to(torch.bfloat16)
    TorchBackend(BackendOptions(CPU, enforce_eager=True)).prepare_model(model)
    assert all(type(m) is nn.Linear for m in (model[0], model[2]))
    fp32 = nn.Sequential(nn.Linear(8, 8))
    TorchBackend(BackendOptions(CPU), pack_bf16_linears=True).prepare_model(fp32)
    assert type(fp32[0]) is nn.Linear  # packing is for bf16 only
    # A CPU without the C++ kernels still packs bf16 (where oneDNN has a bf16 path).
    if can_pack(torch.bfloat16, CPU) and torch.ops.mkldnn._is_mkldnn_bf16_supported():
        packed = nn.Sequential(nn.Linear(8, 8)).to(torch.bfloat16)
        TorchBackend(BackendOptions(CPU), pack_bf16_linears=True).prepare_model(packed)
        assert type(packed[0]) is PackedLinear
    int8 = TorchBackend(BackendOptions(CPU, quantization=Quantization.INT8))
    int8.prepare_model(model)
    assert all(type(m) is Int8Linear for m in (model[0], model[2]))
