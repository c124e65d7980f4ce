"""The kernels the decoder stack calls write into a given `out=` (the step's buffers, allocated
once a step instead of once an op): the same bits as the form that allocates, into that very
tensor, and a clear error for an `out` of the wrong shape or dtype, or one that is the input.
Kernels this CPU cannot run are skipped, saying why."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import torch

from roseinfer.kernels import load_cpu_kernels

KERNELS = load_cpu_kernels()
pytestmark = pytest.mark.skipif(KERNELS is None, reason="no C++ kernels here")

Call = Callable[[torch.Tensor | None], torch.Tensor]  # out (or None) -> the kernel's result
ROWS, K, N = 3, 128, 96


def _needs(what: str) -> None:
    k = KERNELS
    assert k is not None
    available = {
        "vnni": k.vnni_int8_linear_available,
        "dpbf16": k.dpbf16_linear_available,
        "amx": k.amx_linear_available,
        "amx_int8": k.amx_int8_linear_available,
    }
    if what and not available[what]():
        pytest.skip(f"this CPU does not run the {what} kernels")


def _int8_weight(n: int) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(1)
    return torch.randint(-127, 128, (n, K), generator=g, dtype=torch.int8), torch.rand(n) / 64


def _attention(qkv_form: bool) -> Call:
    """One decode step of 3 sequences (70, 17 and 1 keys) over copies of the same caches."""
    k = KERNELS
    assert k is not None
    heads, kv_heads, head_dim, block_size = 9, 3, 64, 16
    g = torch.Generator().manual_seed(2)
    caches = [torch.randn(40, kv_heads, block_size, head_dim, generator=g).bfloat16() for _ in "kv"]
    lens = [70, 17, 1]
    tables = torch.tensor([[0, 1, 2, 3, 4], [5, 6, 0, 0, 0], [7, 0, 0, 0, 0]])
    slots = torch.tensor([tables[i, (n - 1) // block_size] * block_size + (n - 1) % block_size
                          for i, n in enumerate(lens)])  # fmt: skip
    indices = (slots, tables, torch.tensor(lens))
    qkv = torch.randn(3, (heads + 2 * kv_heads) * head_dim, generator=g).bfloat16()
    angles = torch.rand(3, head_dim // 2, generator=g) * 6.3
    cos, sin = angles.cos().bfloat16(), angles.sin().bfloat16()
    q, kk, v = qkv.split([heads * head_dim, kv_heads * head_dim, kv_heads * head_dim], dim=1)

    def call(out: torch.Tensor | None) -> torch.Tensor:
        kc, vc = (c.clone() for c in caches)
        if qkv_form:
            return k.paged_decode_attention_qkv(
                qkv, cos, sin, heads, kc, vc, *indices, 0.125, out=out
            )
        return k.paged_decode_attention(
            q.reshape(3, heads, head_dim),
            kk.reshape(3, kv_heads, head_dim),
            v.reshape(3, kv_heads, head_dim),
            kc, vc, *indices, 0.125, out=out,
        )  # fmt: skip

    return call


def _cases() -> dict[str, tuple[str, Callable[[], Call]]]:
    """name -> (the kernels it needs, or "", a maker of its call)."""
    k = KERNELS
    assert k is not None
    g = torch.Generator().manual_seed(0)
    x32 = torch.randn(ROWS, K, generator=g)
    x = x32.bfloat16()
    w = torch.randn(N, K, generator=g).bfloat16()
    bias = torch.randn(N, generator=g).bfloat16()
    norm = torch.rand(K, generator=g).bfloat16()
    residual = torch.randn(ROWS, K, generator=g).bfloat16()
    w8, s8 = _int8_weight(N)
    gate_up8, gs8 = _int8_weight(2 * N)
    gate_up = torch.randn(2 * N, K, generator=g).bfloat16()
    return {
        "rms_norm": ("", lambda: lambda out: k.rms_norm(x, norm, 1e-5, out=out)),
        "add_rms_norm": (
            "",
            lambda: lambda out: k.add_rms_norm(x, residual.clone(), norm, 1e-5, out=out),
        ),
        "silu_and_mul": ("", lambda: lambda out: k.silu_and_mul(x, out=out)),
        "int8_linear": ("", lambda: lambda out: k.int8_linear(x32, w8, s8, out=out)),
        "small_batch_linear": ("", lambda: lambda out: k.small_batch_linear(x, w, bias, out=out)),
        "vnni_int8_linear": (
            "vnni",
            lambda: (
                lambda out, p=k.vnni_pack_weight(w8): k.vnni_int8_linear(
                    x, p, s8.bfloat16(), bias, out=out
                )
            ),
        ),
        "vnni_int8_gated_linear": (
            "vnni",
            lambda: (
                lambda out, p=k.vnni_pack_gated(gate_up8): k.vnni_int8_gated_linear(
                    x, p, gs8.bfloat16(), None, True, out=out
                )
            ),
        ),
        "dpbf16_linear": (
            "dpbf16",
            lambda: lambda out, p=k.dpbf16_pack_weight(w): k.dpbf16_linear(x, p, bias, out=out),
        ),
        "dpbf16_gated_linear": (
            "dpbf16",
            lambda: (
                lambda out, p=k.dpbf16_pack_gated(gate_up): k.dpbf16_gated_linear(
                    x, p, None, True, out=out
                )
            ),
        ),
        "amx_linear": (
            "amx",
            lambda: lambda out, p=k.amx_pack_weight(w): k.amx_linear(x, p, bias, out=out),
        ),
        "amx_int8_linear": (
            "amx_int8",
            lambda: (
                lambda out, p=k.amx_pack_weight(w8): k.amx_int8_linear(
                    x, p, s8.bfloat16(), bias, out=out
                )
            ),
        ),
        "paged_decode_attention": ("", lambda: _attention(qkv_form=False)),
        "paged_decode_attention_qkv": ("", lambda: _attention(qkv_form=True)),
        # The stack's DecodeLinear: its kernels, and aten's paths (dense; small_batch past its
        # kernel rows), whose own output is copied into `out`.
        "DecodeLinear small_batch": (
            "",
            lambda: lambda out, d=k.DecodeLinear("small_batch", w, bias=bias): d(x, out=out),
        ),
        "DecodeLinear small_batch past its rows": (
            "",
            lambda: lambda out, d=k.DecodeLinear("small_batch", w, kernel_rows=1): d(x, out=out),
        ),
        "DecodeLinear dense": ("", lambda: lambda out, d=k.DecodeLinear("dense", w): d(x, out=out)),
        "DecodeLinear dense silu_mul": (
            "",
            lambda: lambda out, d=k.DecodeLinear("dense", gate_up): d.silu_mul(x, out=out),
        ),
    }


CASES = _cases() if KERNELS is not None else {}


@pytest.mark.parametrize("name", list(CASES))
def test_a_kernel_writes_into_out_the_bits_it_would_allocate(name):
    needs, make = CASES[name]
    _needs(needs)
    call = make()
    expected = call(None)
    out = torch.full_like(expected, float("nan"))
    got = call(out)
    assert got.data_ptr() == out.data_ptr()
    assert torch.equal(out, expected)


@pytest.mark.parametrize("name", ["rms_norm", "small_batch_linear", "paged_decode_attention_qkv"])
def test_an_out_of_the_wrong_shape_or_dtype_is_refused(name):
    call = CASES[name][1]()
    expected = call(None)
    with pytest.raises(RuntimeError, match="out must be"):
        call(expected.new_empty(expected.shape[0] + 1, *expected.shape[1:]))
    with pytest.raises(RuntimeError, match="out must be"):
        call(expected.float())
    with pytest.raises(RuntimeError, match="out must be"):
        call(torch.empty(expected.shape[::-1], dtype=expected.dtype).transpose(0, -1))  # strided


def test_out_may_not_be_the_input_it_reads():
    k = KERNELS
    assert k is not None
    x = torch.randn(ROWS, K).bfloat16()
    residual = torch.randn(ROWS, K).bfloat16()
    norm = torch.ones(K).bfloat16()
    with pytest.raises(RuntimeError, match="out must not be the input"):
        k.rms_norm(x, norm, 1e-5, out=x)
    with pytest.raises(RuntimeError, match="out must not be the residual"):
        k.add_rms_norm(x, residual, norm, 1e-5, out=residual)
    w = torch.randn(K, K).bfloat16()
    with pytest.raises(RuntimeError, match="out must not be the input"):
        k.small_batch_linear(x, w, out=x)


def test_an_empty_batch_writes_into_an_empty_out():
    """Zero rows: nothing to write, and no false "out is the input" (both hold no data)."""
    k = KERNELS
    assert k is not None
    x = torch.empty(0, K).bfloat16()
    y = k.small_batch_linear(x, torch.randn(N, K).bfloat16(), out=torch.empty(0, N).bfloat16())
    assert y.shape == (0, N)
    assert k.rms_norm(
        x, torch.ones(K).bfloat16(), 1e-5, out=torch.empty(0, K).bfloat16()
    ).shape == (0, K)


def test_a_decode_linear_reports_its_out_features():
    k = KERNELS
    assert k is not None
    w = torch.randn(N, K).bfloat16()
    assert k.DecodeLinear("dense", w).out_features == N
    assert k.DecodeLinear("small_batch", w).out_features == N
    if k.vnni_int8_linear_available():
        w8, s8 = _int8_weight(N)
        packed = k.vnni_pack_weight(w8)
        assert k.DecodeLinear("vnni_int8", packed, s8.bfloat16()).out_features == N
