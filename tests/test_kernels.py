"""The C++ CPU kernels against the plain PyTorch code they replace (roseinfer/kernels/)."""

from __future__ import annotations

import dataclasses
import itertools
import math
import os
import random
import re
import shutil
import subprocess

import pytest
import torch
import torch.nn.functional as F
from conftest import assert_tile_tasks, torch_threads
from torch import nn

from roseinfer.backends import AttentionChoice, BackendOptions, CpuBackend, TorchBackend
from roseinfer.backends.cpu_attention import KernelPagedAttention, KernelPrefill
from roseinfer.backends.cpu_linear import (
    AMX_GATED_ROWS,
    AMX_ROWS,
    AVX2_KERNEL_ROWS,
    DPBF16_ROWS_ON_AMX,
    SMALL_BATCH_ROWS,
    VNNI_ROWS_ON_AMX,
    KernelDenseLinear,
    KernelInt8Linear,
    KernelPackedLinear,
    dense_kernel_rows,
)
from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.activation import SiluAndMul
from roseinfer.layers.attention import AttentionMetadata, ReferenceAttention
from roseinfer.layers.kv_cache import LayerCache, quantize_rows
from roseinfer.layers.linear import Int8Linear, can_pack, can_pack_fp32
from roseinfer.layers.logprobs import LogprobOps
from roseinfer.layers.norm import RMSNorm
from roseinfer.layers.rotary import RotaryEmbedding
from roseinfer.layers.sampler import Sampler
from roseinfer.sampling_params import SamplingParams

DTYPES = [torch.float32, torch.bfloat16, torch.float16]
CPU = torch.device("cpu")
TORCH = TorchBackend(BackendOptions(CPU))


@pytest.fixture(scope="module")
def kernels():
    k = load_cpu_kernels()
    if k is None:
        if shutil.which("c++") or shutil.which("g++"):
            pytest.fail("a C++ compiler is installed but the kernels did not build (see log)")
        pytest.skip("no C++ compiler: the engine uses the reference path")
    return k


@pytest.fixture(scope="module")
def cpu_backend(kernels):
    return CpuBackend(BackendOptions(CPU), kernels)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,dim", [(1, 576), (7, 64), (3, 40), (2, 44)])
def test_rms_norm_and_fused_residual_add_match_pytorch(cpu_backend, dtype, rows, dim):
    torch.manual_seed(0)
    norm = RMSNorm(dim, 1e-5, TORCH).to(dtype)
    norm.weight.data = torch.randn(dim, dtype=dtype)
    fast = RMSNorm(dim, 1e-5, cpu_backend).to(dtype)
    fast.weight.data = norm.weight.data
    x, residual = torch.randn(rows, dim, dtype=dtype) * 3, torch.randn(rows, dim, dtype=dtype)
    want = norm(x)
    want_fused, want_residual = norm(x, residual)
    got_residual = residual.clone()
    got_fused, returned = fast(x, got_residual)
    assert returned is got_residual  # updated in place
    # Same roundings as the unfused ops: exact in 16-bit types, fp32 within summation order.
    atol = 1e-5 if dtype == torch.float32 else 0
    torch.testing.assert_close(fast(x), want, atol=atol, rtol=0)
    torch.testing.assert_close(got_fused, want_fused, atol=atol, rtol=0)
    torch.testing.assert_close(got_residual, want_residual, atol=0, rtol=0)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("head_dim", [64, 24])
def test_per_head_rms_norm_on_the_fused_qkv_views_matches_pytorch(
    kernels, cpu_backend, dtype, head_dim
):
    """Qwen3's q/k norms: each head's vector normed, read through a strided view of qkv."""
    torch.manual_seed(0)
    n, heads, kv_heads = 5, 6, 2
    qkv = torch.randn(n, (heads + 2 * kv_heads) * head_dim, dtype=dtype) * 3
    q = qkv[:, : heads * head_dim].view(n, heads, head_dim)
    k = qkv[:, heads * head_dim : (heads + kv_heads) * head_dim].view(n, kv_heads, head_dim)
    norm = RMSNorm(head_dim, 1e-6, TORCH).to(dtype)
    norm.weight.data = torch.randn(head_dim, dtype=dtype)
    fast = RMSNorm(head_dim, 1e-6, cpu_backend).to(dtype)
    fast.weight.data = norm.weight.data
    want = [norm(q), norm(k)]
    got = [fast(q), fast(k)]
    # Same roundings as the unfused ops; the mean of squares sums in another order, which can
    # move a result by one unit in the last place of the dtype.
    ulp = {torch.float32: 2e-6, torch.bfloat16: 8e-3, torch.float16: 1e-3}[dtype]
    for g, w in zip(got, want, strict=True):
        assert g.is_contiguous() and g.shape == w.shape
        torch.testing.assert_close(g, w, atol=1e-5, rtol=ulp)
    with pytest.raises(RuntimeError, match="contiguous rows"):
        kernels.rms_norm(q.transpose(1, 2), norm.weight, 1e-6)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,inter", [(1, 1536), (5, 24), (2, 13)])  # 13: vectors and a tail
def test_silu_and_mul_matches_pytorch(cpu_backend, dtype, rows, inter):
    torch.manual_seed(0)
    x = torch.randn(rows, 2 * inter, dtype=dtype) * 4
    want = SiluAndMul(TORCH)(nn.Identity(), x)
    # exp differs from libm's in the last bits: at most one unit in the last place of the dtype.
    ulp = {torch.float32: 2e-7, torch.bfloat16: 8e-3, torch.float16: 1e-3}[dtype]
    torch.testing.assert_close(SiluAndMul(cpu_backend)(nn.Identity(), x), want, atol=1e-6, rtol=ulp)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("head_dim", [64, 16, 24])  # 24: a vector of 8 and a scalar tail
def test_rotary_in_place_on_the_fused_qkv_views_matches_pytorch(cpu_backend, dtype, head_dim):
    torch.manual_seed(0)
    n, heads, kv_heads = 6, 9, 3
    qkv = torch.randn(n, (heads + 2 * kv_heads) * head_dim, dtype=dtype)
    q = qkv[:, : heads * head_dim].view(n, heads, head_dim)
    k = qkv[:, heads * head_dim : (heads + kv_heads) * head_dim].view(n, kv_heads, head_dim)
    v_before = qkv[:, (heads + kv_heads) * head_dim :].clone()
    angles = torch.rand(n, head_dim // 2) * 6
    cos, sin = angles.cos().to(dtype), angles.sin().to(dtype)
    want_q, want_k = TORCH.rotary(q, k, cos, sin)
    got_q, got_k = cpu_backend.rotary(q, k, cos, sin)
    atol = 1e-6 if dtype == torch.float32 else 0
    torch.testing.assert_close(got_q, want_q, atol=atol, rtol=0)
    torch.testing.assert_close(got_k, want_k, atol=atol, rtol=0)
    assert torch.equal(qkv[:, (heads + kv_heads) * head_dim :], v_before)  # v untouched


def test_rotary_tables_are_the_rows_rounded_to_the_dtype_asked_and_follow_new_buffers():
    """The step's tables: the fp32 rows at `positions`, rounded to the dtype asked (as
    transformers rounds them), whatever dtype came before; and the new buffers' rows once
    something (the loader, `to`) has replaced them."""
    rope = RotaryEmbedding(64, 128, 10000.0, None)
    positions = torch.tensor([5, 0, 127, 5])
    for dtype in (torch.bfloat16, torch.float32, torch.float16, torch.bfloat16):
        tables = rope(positions, dtype)
        assert tables.cos.dtype == dtype and tables.sin.dtype == dtype
        assert torch.equal(tables.cos, rope.cos[positions].to(dtype))
        assert torch.equal(tables.sin, rope.sin[positions].to(dtype))
    rope.cos, rope.sin = rope.cos * 0.5, rope.sin * 0.25
    tables = rope(positions, torch.bfloat16)
    assert torch.equal(tables.cos, rope.cos[positions].to(torch.bfloat16))
    assert torch.equal(tables.sin, rope.sin[positions].to(torch.bfloat16))


def _decode_batch(context_lens: list[int], block_size: int, num_blocks: int, seed: int = 0):
    """Decode metadata for sequences scattered over random, non-contiguous cache blocks."""
    g = torch.Generator().manual_seed(seed)
    perm = torch.randperm(num_blocks, generator=g).tolist()
    tables, slots = [], []
    for n in context_lens:
        blocks = [perm.pop() for _ in range(-(-n // block_size))]
        tables.append(blocks)
        p = n - 1  # the new token's position
        slots.append(blocks[p // block_size] * block_size + p % block_size)
    width = max(len(t) for t in tables)
    meta = AttentionMetadata(
        query_start_loc=torch.arange(len(context_lens) + 1),
        context_lens=torch.tensor(context_lens),
        slot_mapping=torch.tensor(slots),
        block_tables=torch.tensor([t + [0] * (width - len(t)) for t in tables]),
        query_lens=[1] * len(context_lens),
        context_lens_host=list(context_lens),
        num_decode_seqs=len(context_lens),
        block_size=block_size,
    )
    return meta


def _through_both_backends(q, k, v, caches, meta, scale):
    """(outputs, written caches) of the reference and the C++ backend, each on copies of `caches`
    (k, v and, for int8 caches, their scales)."""
    outs, written = [], []
    for attention in (ReferenceAttention(), KernelPagedAttention(load_cpu_kernels())):
        cache = LayerCache(*(c.clone() for c in caches))
        step = attention.prepare(meta)
        outs.append(attention.forward(q, k, v, cache, step, scale))
        written.append(tuple(c for c in cache if c is not None))
    return outs, written


@pytest.mark.parametrize("dtype", DTYPES)
# Query heads per KV head 1-4 (the AVX2 value pass takes them together) and 6 (one at a time).
@pytest.mark.parametrize(
    "head_dim,heads,kv_heads",
    [(64, 9, 3), (128, 4, 4), (16, 4, 2), (64, 8, 2), (128, 8, 4), (64, 6, 1)],
)
@pytest.mark.parametrize("block_size", [16, 5])  # odd: the bf16 kernel's value pairs
def test_paged_decode_attention_matches_the_reference_backend(
    kernels, dtype, head_dim, heads, kv_heads, block_size
):
    torch.manual_seed(0)
    num_blocks = 64 if block_size == 16 else 200
    meta = _decode_batch([1, 16, 17, 70, 200], block_size, num_blocks)
    b = meta.num_seqs
    caches = [
        torch.randn(num_blocks, kv_heads, block_size, head_dim, dtype=dtype) for _ in range(2)
    ]
    q = torch.randn(b, heads, head_dim, dtype=dtype)
    k, v = (torch.randn(b, kv_heads, head_dim, dtype=dtype) for _ in range(2))
    outs, written = _through_both_backends(q, k, v, caches, meta, head_dim**-0.5)
    tol = 1e-5 if dtype == torch.float32 else 2e-2
    torch.testing.assert_close(outs[1], outs[0], atol=tol, rtol=tol)
    for ref, got in zip(written[0], written[1], strict=True):
        assert torch.equal(ref, got)  # the new K/V land in the same slots, nothing else moves


# Query heads per KV head 1, 3, 4, 6 at head_dim 64 (the AMX key products' two B tiles, the
# value products' four C tiles) and 2, 4 at 128 (four B tiles; the values in two 64-dim passes).
@pytest.mark.parametrize(
    "head_dim,heads,kv_heads",
    [(64, 9, 3), (64, 3, 3), (64, 8, 2), (64, 6, 1), (128, 8, 4), (128, 4, 1)],
)
# 8: the vector key products, the values on AMX; 5: all vector products on AMX CPUs too.
@pytest.mark.parametrize("block_size", [16, 32, 8, 5])
def test_paged_decode_attention_at_long_contexts_matches_the_reference_backend(
    kernels, head_dim, heads, kv_heads, block_size
):
    """bf16 caches from 256 keys a task: where the CPU has AMX, q . k and p . v on its tiles
    (`attend_group_bf16_amx`), the keys' last group partial, one and two 16-key groups a block,
    the values' last 32-key step partial (and its last pair a single row at 611 keys)."""
    torch.manual_seed(0)
    lens = [256, 300, 611, 1000]
    num_blocks = sum(-(-n // block_size) for n in lens) + 16
    meta = _decode_batch(lens, block_size, num_blocks)
    b = meta.num_seqs
    caches = [
        torch.randn(num_blocks, kv_heads, block_size, head_dim, dtype=torch.bfloat16)
        for _ in range(2)
    ]
    # Peaked weights (q x 3): each output leans on a few values, so a wrong score shows.
    q = (torch.randn(b, heads, head_dim) * 3).to(torch.bfloat16)
    k, v = (torch.randn(b, kv_heads, head_dim, dtype=torch.bfloat16) for _ in range(2))
    outs, _ = _through_both_backends(q, k, v, caches, meta, head_dim**-0.5)
    torch.testing.assert_close(outs[1], outs[0], atol=2e-2, rtol=2e-2)


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
@pytest.mark.parametrize(
    "context_lens",
    [[900, 1, 2, 5, 1, 7, 40, 1], [5] * 40 + [700], [64] * 6],  # one sequence dominating, even
)
def test_paged_decode_attention_any_split_of_mixed_lengths(kernels, threads, context_lens):
    """The kernel splits its (sequence, KV head) tasks among threads by keys, not by count: with
    one long sequence among short ones some threads get no task. Every output is still there."""
    torch.manual_seed(0)
    block_size, heads, kv_heads, head_dim = 16, 9, 3, 64
    num_blocks = sum(-(-n // block_size) for n in context_lens) + 8
    meta = _decode_batch(context_lens, block_size, num_blocks)
    caches = [torch.randn(num_blocks, kv_heads, block_size, head_dim) for _ in range(2)]
    q = torch.randn(meta.num_seqs, heads, head_dim)
    k, v = (torch.randn(meta.num_seqs, kv_heads, head_dim) for _ in range(2))
    with torch_threads(threads):
        outs, _ = _through_both_backends(q, k, v, caches, meta, head_dim**-0.5)
    torch.testing.assert_close(outs[1], outs[0], atol=1e-5, rtol=1e-5)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU here: no region of two")
@pytest.mark.parametrize("stalled", [0, 1])
@pytest.mark.parametrize(
    "n,grain,pieces,held", [(64, 1, 8, 4), (64, 10, 8, 10), (7, 1, 8, 1), (64, 1, 1, 32)]
)
def test_a_region_thread_takes_what_a_stalled_thread_left(kernels, stalled, n, grain, pieces, held):
    """In one parallel region (the decoder stack's) each thread's share of a loop is cut into up
    to `pieces` pieces of at least `grain` indices, and a thread done with its share takes the
    pieces left in another's. One of two threads stalls in its first piece, as when another
    process takes its CPU: the other runs every other index, the rest of the stalled share
    included, instead of waiting for it (here 10 s). With one piece a share, the stalled thread
    holds its whole share."""
    share = -(-n // 2)
    with torch_threads(2):
        owners = kernels.region_loop_threads(n, grain, pieces, stalled)
    stalled_piece = torch.zeros(n, dtype=torch.bool)
    stalled_piece[stalled * share : stalled * share + held] = True
    assert owners[stalled_piece].eq(stalled).all()
    assert owners[~stalled_piece].eq(1 - stalled).all()
    with torch_threads(2), pytest.raises(RuntimeError, match="must be one of the 2 threads"):
        kernels.region_loop_threads(n, grain, pieces, 2)
    with torch_threads(2), pytest.raises(RuntimeError, match=r"pieces_per_share must lie in"):
        kernels.region_loop_threads(n, grain, 256, stalled)


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one CPU here: no region of two")
def test_region_handoff_is_timed_in_a_region_of_two_and_nan_without_one(kernels):
    """The benchmarks' probe of what a loop costs to hand between the region's threads: a
    positive time in a region of two threads (tens of ns to a few µs on any host: one loop
    that the second thread never ran would hang the region, not return); NaN with one thread,
    which runs no region; loops must be positive."""
    with torch_threads(2):
        ns = kernels.region_handoff_ns(200)
    assert 0 < ns < 1e6
    with torch_threads(1):
        assert math.isnan(kernels.region_handoff_ns(10))
    with pytest.raises(RuntimeError, match="needs loops > 0"):
        kernels.region_handoff_ns(0)


@pytest.mark.parametrize("threads", [2, 3, 4, 16])
@pytest.mark.parametrize(
    "context_lens", [[2000], [256], [1], [300, 17], [900, 3, 40], [2000, 10], [64] * 8 + [1000]]
)
@pytest.mark.parametrize(
    "cache,head_dim,heads,kv_heads",
    [("float32", 64, 9, 3), ("bfloat16", 64, 9, 3), ("int8", 64, 9, 3), ("float32", 16, 4, 2)],
)
def test_paged_decode_attention_splits_the_keys_of_few_sequences(
    kernels, threads, context_lens, cache, head_dim, heads, kv_heads
):
    """Where whole (sequence, KV head) tasks cannot balance the threads (one sequence: 3 KV heads
    over 2 threads; a long sequence beside short ones) and a sequence has 256 keys or more, the
    kernel cuts the tasks' keys into equal runs, one per thread, and merges the parts of a task
    it cut by their softmax max and sum: the outputs still match the reference, for a task cut
    in two, in many (16 threads over 3 tasks) and not at all (one key)."""
    torch.manual_seed(0)
    block_size = 16
    num_blocks = sum(-(-n // block_size) for n in context_lens) + 4
    meta = _decode_batch(context_lens, block_size, num_blocks)
    b, shape = meta.num_seqs, (num_blocks, kv_heads, block_size, head_dim)
    dtype = torch.bfloat16 if cache == "bfloat16" else torch.float32
    if cache == "int8":
        caches = [torch.randint(-127, 128, shape, dtype=torch.int8) for _ in range(2)]
        caches += [torch.rand(shape[:3]) / 64 for _ in range(2)]
    else:
        caches = [torch.randn(shape, dtype=dtype) for _ in range(2)]
    # Peaked softmaxes, so that the parts' maxes matter (the int8 cache's scores are already
    # peaked, and its int8 rounding of q grows with them).
    q = torch.randn(b, heads, head_dim, dtype=dtype) * (1 if cache == "int8" else 2)
    k, v = (torch.randn(b, kv_heads, head_dim, dtype=dtype) for _ in range(2))
    with torch_threads(threads):
        outs, _ = _through_both_backends(q, k, v, caches, meta, head_dim**-0.5)
    tol = {"float32": 1e-5, "bfloat16": 2e-2, "int8": 3e-2}[cache]
    torch.testing.assert_close(outs[1], outs[0], atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
# 64: AVX-512 and AVX2 vectors; 24: a vector of 8 and a scalar tail; 128 with G = 1; 544: past
# the int8 cache's bound of 512 (a model-dtype cache, the plain loops).
@pytest.mark.parametrize(
    "cache,head_dim,heads,kv_heads",
    [
        *(
            (c, *shape)
            for c in ("model", "int8")
            for shape in [(64, 9, 3), (24, 4, 2), (128, 4, 4)]
        ),
        ("model", 544, 2, 1),
    ],
)
def test_decode_attention_from_the_fused_qkv_rows_is_rotary_then_the_kernel(
    kernels, dtype, cache, head_dim, heads, kv_heads
):
    """The decoder stack's call: q, k, v read from the rows of the fused qkv projection and
    rotated on the way give the same bits (output and written cache) as rotary_embedding in place
    followed by paged_decode_attention, and leave qkv as it was."""
    torch.manual_seed(0)
    block_size, num_blocks = 5, 200
    meta = _decode_batch([1, 16, 17, 70], block_size, num_blocks)
    b, q_size, kv_size = meta.num_seqs, heads * head_dim, kv_heads * head_dim
    shape = (num_blocks, kv_heads, block_size, head_dim)
    if cache == "int8":
        caches = [torch.randint(-127, 128, shape, dtype=torch.int8) for _ in range(2)]
        caches += [torch.rand(shape[:3]) / 64 for _ in range(2)]
    else:
        caches = [torch.randn(shape, dtype=dtype) for _ in range(2)]
    # Rows wider than q + 2 kv (a strided view), as a slice of a larger projection would be.
    qkv = torch.randn(b, q_size + 2 * kv_size + 8, dtype=dtype)[:, : q_size + 2 * kv_size]
    angles = torch.rand(b, head_dim // 2) * 6.3
    cos, sin = angles.cos().to(dtype), angles.sin().to(dtype)
    indices = (meta.slot_mapping, meta.block_tables, meta.context_lens)

    def split(x):
        q, k, v = x.split([q_size, kv_size, kv_size], dim=1)
        return (q.reshape(b, heads, head_dim), k.reshape(b, kv_heads, head_dim),
                v.reshape(b, kv_heads, head_dim))  # fmt: skip

    ref_caches = [c.clone() for c in caches]
    q, k, v = (t.clone() for t in split(qkv))
    kernels.rotary_embedding(q, k, cos, sin)
    scales = ref_caches[2:] if cache == "int8" else [None, None]
    ref = kernels.paged_decode_attention(q, k, v, *ref_caches[:2], *indices, 0.125, *scales)
    before = qkv.clone()
    scales = caches[2:] if cache == "int8" else [None, None]
    got = kernels.paged_decode_attention_qkv(
        qkv, cos, sin, heads, *caches[:2], *indices, 0.125, *scales
    )
    assert torch.equal(got, ref)
    for ref_cache, got_cache in zip(ref_caches, caches, strict=True):
        assert torch.equal(got_cache, ref_cache)
    assert torch.equal(qkv, before)


def test_decode_attention_from_qkv_rejects_what_it_cannot_read(kernels):
    meta = _decode_batch([3, 9], 4, 16)
    caches = [torch.zeros(16, 2, 4, 8) for _ in range(2)]
    indices = (meta.slot_mapping, meta.block_tables, meta.context_lens)
    cos = sin = torch.ones(2, 4)
    with pytest.raises(RuntimeError, match="qkv's width"):
        kernels.paged_decode_attention_qkv(torch.zeros(2, 40), cos, sin, 4, *caches, *indices, 1.0)
    with pytest.raises(RuntimeError, match="cos and sin"):
        kernels.paged_decode_attention_qkv(
            torch.zeros(2, 64), cos[:, :3], sin, 4, *caches, *indices, 1.0
        )
    with pytest.raises(RuntimeError, match="share a dtype"):
        kernels.paged_decode_attention_qkv(
            torch.zeros(2, 64), cos.bfloat16(), sin, 4, *caches, *indices, 1.0
        )


def test_int8_rows_round_trip_within_half_a_step():
    torch.manual_seed(0)
    x = torch.randn(5, 3, 64, dtype=torch.bfloat16) * torch.tensor([1e-3, 1.0, 40.0])[:, None]
    x[4, 1] = 0  # an all-zero row: scale 0, values 0
    q, scale = quantize_rows(x)
    assert q.dtype == torch.int8 and scale.shape == (5, 3) and scale.dtype == torch.float32
    assert int(q.abs().max()) == 127 and scale[4, 1] == 0 and not q[4, 1].any()
    err = (q.float() * scale[..., None] - x.float()).abs()
    assert bool((err <= scale[..., None] / 2 * (1 + 1e-6)).all())


def _halfway_rows(dtype: torch.dtype) -> torch.Tensor:
    """[16, 64] rows whose x / scale fall on half-integers (ties), within an ulp or two of them
    (fp32 only: bf16 holds too few bits), on nothing special, on denormals (1 / scale then
    overflows), and on values near fp32's largest."""
    gen = torch.Generator().manual_seed(0)
    halves = torch.arange(-32, 31, dtype=torch.float32) + 0.5  # 63 half-integers
    rows = []
    for step in (1.0, 0.125, 4.0):  # scale = step exactly: every x / scale a tie
        rows.append(torch.cat([torch.tensor([127.0]), halves]) * step)
    amax = torch.tensor(100.0)
    scale = amax / 127
    for ulps in (1, -1, 2, -2):
        x = halves * scale
        for _ in range(abs(ulps)):
            x = torch.nextafter(x, torch.full_like(x, math.copysign(math.inf, ulps)))
        rows.append(torch.cat([amax[None], x]))
    while len(rows) < 12:
        rows.append(
            torch.randn(64, generator=gen) * 10 ** torch.randint(-3, 3, (1,), generator=gen)
        )
    rows.append(torch.randn(64, generator=gen) * 1e-39)  # denormals: scale denormal
    rows.append(torch.linspace(-1, 1, 64) * 3e38)
    rows.append(torch.zeros(64))
    rows.append(torch.linspace(-5, 7, 64))
    x = torch.stack(rows)
    return x if dtype == torch.float32 else x.to(dtype)


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_int8_cache_writes_round_as_the_reference_at_halfway_quotients(kernels, dtype):
    """`write_kv_cache`'s int8 rows bit for bit those of `quantize_rows` (the reference path)
    where x / scale is a tie or within an ulp of one, and where 1 / scale is not finite: a kernel
    that multiplied by 1 / scale instead of dividing would round some of these otherwise."""
    x = _halfway_rows(dtype)  # [16, 64]
    k, v = x[:, None], x.flip(0)[:, None]  # [16, 1, 64]: one KV head, one block
    slots = torch.arange(16)
    caches = [torch.zeros(1, 1, 16, 64, dtype=torch.int8) for _ in range(2)]
    caches += [torch.zeros(1, 1, 16) for _ in range(2)]
    ref = LayerCache(*(c.clone() for c in caches))
    ref.write(slots // 16, slots % 16, k, v)
    kernels.write_kv_cache(k, v, caches[0], caches[1], slots, caches[2], caches[3])
    for want, got in zip(ref, caches, strict=True):
        assert torch.equal(got, want)
    q, _ = quantize_rows(x)
    assert q[0, 1:4].tolist() == [-32, -30, -30]  # -31.5, -30.5, -29.5: ties, to even


@pytest.mark.parametrize("dtype", DTYPES)
# Query heads per KV head (G) 3, 2, 4 and 1: each a kernel of its own (and 16 dims: plain loops).
@pytest.mark.parametrize(
    "head_dim,heads,kv_heads", [(64, 9, 3), (128, 4, 2), (64, 8, 2), (128, 4, 4), (16, 4, 2)]
)
@pytest.mark.parametrize("block_size", [16, 5])  # 5: chunks of keys cut short by a block's end
def test_int8_cache_decode_matches_the_reference_backend(
    kernels, dtype, head_dim, heads, kv_heads, block_size
):
    """An int8 cache: the kernel quantizes the new K/V to the same bits as the reference path
    (values and scales) and attends within tolerance of the dequantized reference (it also
    rounds q to int8 for the q . k products, as llama.cpp's q8_0 path does)."""
    torch.manual_seed(0)
    num_blocks = 64 if block_size == 16 else 200
    meta = _decode_batch([1, 16, 17, 70, 200], block_size, num_blocks)
    b = meta.num_seqs
    shape = (num_blocks, kv_heads, block_size, head_dim)
    caches = [
        torch.randint(-127, 128, shape, dtype=torch.int8),
        torch.randint(-127, 128, shape, dtype=torch.int8),
        torch.rand(shape[:3]) / 64,
        torch.rand(shape[:3]) / 64,
    ]
    q = torch.randn(b, heads, head_dim, dtype=dtype)
    k, v = (torch.randn(b, kv_heads, head_dim, dtype=dtype) for _ in range(2))
    k[0, 0] = 0  # a zero row quantizes to zeros with scale 0
    outs, written = _through_both_backends(q, k, v, caches, meta, head_dim**-0.5)
    assert outs[1].dtype == dtype
    torch.testing.assert_close(outs[1], outs[0], atol=3e-2, rtol=3e-2)
    for ref, got in zip(written[0], written[1], strict=True):
        assert torch.equal(ref, got)


def test_int8_cache_long_context_of_extreme_values(kernels):
    """4,000 keys of value 127 (every row's maximum) and equal scores: the kernel's fixed-point
    p . v sums reach their largest and must not overflow; the output is the value itself."""
    n, block_size, heads, kv_heads, head_dim = 4000, 16, 9, 3, 64
    num_blocks = n // block_size + 1
    meta = _decode_batch([n], block_size, num_blocks)
    shape = (num_blocks, kv_heads, block_size, head_dim)
    caches = [
        torch.zeros(shape, dtype=torch.int8),  # every key alike: every score equal
        torch.full(shape, 127, dtype=torch.int8),
        torch.ones(shape[:3]),
        torch.full(shape[:3], 0.5),
    ]
    q = torch.randn(1, heads, head_dim, dtype=torch.bfloat16)
    k = torch.zeros(1, kv_heads, head_dim, dtype=torch.bfloat16)
    v = torch.full((1, kv_heads, head_dim), 63.5, dtype=torch.bfloat16)  # stored as 127 * 0.5
    outs, _ = _through_both_backends(q, k, v, caches, meta, head_dim**-0.5)
    for out in outs:
        torch.testing.assert_close(
            out.float(), torch.full((1, heads, head_dim), 63.5), rtol=4e-3, atol=0
        )


def _function_bodies(kernels) -> dict[str, list[str]]:
    """The built library's functions (demangled names) and their instructions, by objdump."""
    objdump = shutil.which("objdump")
    if objdump is None:
        pytest.skip("no objdump to read the built library with")
    listing = subprocess.run(
        [objdump, "-d", "--no-show-raw-insn", "--demangle", kernels.__file__],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    bodies: dict[str, list[str]] = {}
    name = ""
    for line in listing.splitlines():
        if match := re.match(r"^[0-9a-f]+ <(.*)>:$", line):
            name = match.group(1)
            bodies[name] = []
        elif name:
            bodies[name].append(line.split("\t")[-1].strip())
    return bodies


def test_every_decode_attention_kernel_prefetches_its_blocks(kernels):
    """The built library's decode-attention kernels each hold a software prefetch: GCC 12
    deleted the loops of `_mm_prefetch` that ask for the blocks ahead, so the block prefetch
    compiled to nothing and no result could show it (BENCHMARKS.md, session 21)."""
    bodies = _function_bodies(kernels)
    passes = ("attend_group", "score_keys", "attend_values")  # kernels and their passes

    def is_pass(name: str) -> bool:
        return "roseinfer::attention::" in name and any(p in name for p in passes)

    attention = {  # a kernel called from another (the AMX one's fallback) has a PLT stub too
        n: b for n, b in bodies.items() if is_pass(n) and not n.endswith("@plt")
    }
    if not attention:
        pytest.skip("no vectorised decode-attention kernels in this build (no AVX2 or AVX-512)")

    def hands_on(body: list[str]) -> bool:  # calls passes that read the blocks (checked apart)
        return any(x.startswith(("call", "jmp")) and is_pass(x) for x in body)

    without = [
        n
        for n, body in attention.items()
        if not any("prefetch" in x for x in body) and not hands_on(body)
    ]
    assert without == [], f"{len(without)} of {len(attention)} kernels prefetch nothing"


def test_vnni_int8_linear_keeps_its_sums_in_place(kernels):
    """Between the `vpdpbusd` of `vnni_int8_linear`'s block loop, no register copies: from the
    intrinsic GCC 12 made two per multiply, which held Zen 5 (two `vpdpbusd` a cycle) to 63 % of
    its peak; `dpbusd_into` (vec.h) keeps each sum in its register (BENCHMARKS.md, session 38).
    Results cannot show this, so the built library is read."""
    loops = {n: b for n, b in _function_bodies(kernels).items() if "run_rows<" in n}
    loops = {n: b for n, b in loops.items() if any(x.startswith("vpdpbusd") for x in b)}
    if not loops:
        pytest.skip("no AVX512-VNNI int8 linear in this build")
    copies = {}
    for name, body in loops.items():
        segment: list[str] = []
        segments = [segment]
        for ins in body:  # straight-line runs, cut at every jump
            segment.append(ins)
            if ins.startswith("j"):
                segment = []
                segments.append(segment)
        count = 0
        for run in segments:
            at = [i for i, ins in enumerate(run) if ins.startswith("vpdpbusd")]
            if len(at) >= 4:  # a block loop's body
                between = run[at[0] : at[-1]]
                count += sum(bool(re.match(r"vmov\w+\s+%zmm\d+,%zmm\d+$", x)) for x in between)
        copies[name] = count
    assert all(c == 0 for c in copies.values()), copies


def test_mixed_decode_and_prefill_step_matches_the_reference_backend(kernels):
    """Decodes through the decode kernel, the prefill chunk through the prefill kernel, in one
    forward."""
    torch.manual_seed(1)
    block_size, heads, kv_heads, head_dim = 4, 4, 2, 64
    k_cache = torch.randn(64, kv_heads, block_size, head_dim)
    v_cache = torch.randn_like(k_cache)
    # Two decodes (contexts 9 and 5) then a 6-token chunk of a sequence with 3 cached tokens.
    tables = [[7, 2, 9], [4, 11, 0], [5, 13, 0]]
    chunk_positions = range(3, 9)
    slots = [tables[0][8 // 4] * 4 + 0, tables[1][1] * 4 + 0] + [
        tables[2][p // 4] * 4 + p % 4 for p in chunk_positions
    ]
    meta = AttentionMetadata(
        query_start_loc=torch.tensor([0, 1, 2, 8]),
        context_lens=torch.tensor([9, 5, 9]),
        slot_mapping=torch.tensor(slots),
        block_tables=torch.tensor(tables),
        query_lens=[1, 1, 6],
        context_lens_host=[9, 5, 9],
        num_decode_seqs=2,
        block_size=block_size,
    )
    q = torch.randn(8, heads, head_dim)
    k, v = torch.randn(8, kv_heads, head_dim), torch.randn(8, kv_heads, head_dim)
    outs, _ = _through_both_backends(q, k, v, (k_cache, v_cache), meta, head_dim**-0.5)
    torch.testing.assert_close(outs[1], outs[0], atol=1e-5, rtol=1e-5)


def test_bad_inputs_are_clear_errors(kernels):
    with pytest.raises(RuntimeError, match="dtype"):
        kernels.rms_norm(
            torch.zeros(2, 8, dtype=torch.float64), torch.ones(8, dtype=torch.float64), 1e-5
        )
    with pytest.raises(RuntimeError, match="weight"):
        kernels.rms_norm(torch.zeros(2, 8), torch.ones(4), 1e-5)
    with pytest.raises(RuntimeError, match="even"):
        kernels.silu_and_mul(torch.zeros(2, 7))
    meta = _decode_batch([5], 4, 8)

    def attend(q_dtype: torch.dtype, cache: torch.Tensor) -> None:
        kernels.paged_decode_attention(
            torch.zeros(1, 2, 16, dtype=q_dtype),
            torch.zeros(1, 2, 16),
            torch.zeros(1, 2, 16),
            cache,
            cache.clone(),
            meta.slot_mapping,
            meta.block_tables,
            meta.context_lens,
            0.25,
        )

    with pytest.raises(RuntimeError, match="share a dtype"):
        attend(torch.bfloat16, torch.zeros(8, 2, 4, 16))
    with pytest.raises(RuntimeError, match="k_scale and v_scale"):  # an int8 cache without them
        attend(torch.float32, torch.zeros(8, 2, 4, 16, dtype=torch.int8))


@pytest.mark.parametrize("dtype", DTYPES)
# Shapes cover each vector path: one or two rows (AVX2's sequential dot_row), tiles of rows,
# in_features with a tail after dot_row's unrolled steps (72), not a multiple of the vector (40),
# more rows than one pass takes (33, 40); from 64 rows on AVX2, rows along the lanes: the widened
# weight rows past their 256-input passes (64 x 300), out_features not a multiple of the 12 rows
# a task takes, an odd last vector of rows (72).
@pytest.mark.parametrize(
    "rows,in_features,out_features",
    [
        (1, 576, 960),
        (2, 72, 37),
        (6, 64, 37),
        (9, 40, 70),
        (33, 300, 37),
        (40, 64, 12),
        (64, 300, 37),
        (72, 64, 25),
    ],
)
def test_int8_linear_matches_the_dequantized_matmul(
    kernels, dtype, rows, in_features, out_features
):
    torch.manual_seed(0)
    lin = nn.Linear(in_features, out_features, bias=True).to(dtype)
    q = Int8Linear(lin)  # aten's weight-only int8 matmul: the path without C++
    x = torch.randn(rows, in_features, dtype=dtype)
    # What the int8 weights mean, computed in fp64: the kernel may only add fp32 rounding.
    exact = (x.double() @ q.qweight.double().T) * q.scale.double()
    want = (exact.to(dtype).double() + lin.bias.double()).to(dtype)
    got = kernels.int8_linear(x, q.qweight, q.scale, q.bias)
    assert got.shape == (rows, out_features) and got.dtype == dtype
    tol = {torch.float32: 1e-5, torch.bfloat16: 1.6e-2, torch.float16: 2e-3}[dtype]
    torch.testing.assert_close(got, want, atol=tol, rtol=tol)
    if dtype == torch.bfloat16:  # and agrees with aten's kernel, the path without C++
        torch.testing.assert_close(got, q(x), atol=tol, rtol=tol)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "rows,in_features,out_features",
    # On AVX2 dot_row passes of up to 4 rows (3 with a tail after its unrolled steps; 6 and 12:
    # more than one pass), then rows along the lanes where lane_rows_pay: pairs of row vectors
    # (14, 48), a last odd one (33 for bf16/fp16, 56), out_features not a multiple of its 12
    # weight rows, in_features past its 256-input passes (300, 520); gemv again at 17 and at 33
    # for fp32.
    [
        (1, 576, 960),
        (2, 72, 37),
        (4, 64, 37),
        (6, 72, 37),
        (8, 64, 37),
        (12, 96, 40),
        (3, 40, 70),
        (14, 300, 37),
        (17, 300, 37),
        (33, 520, 25),
        (48, 64, 24),
        (56, 64, 25),
    ],
)
def test_small_batch_linear_matches_f_linear(kernels, dtype, rows, in_features, out_features):
    torch.manual_seed(0)
    lin = nn.Linear(in_features, out_features, bias=True).to(dtype)
    x = torch.randn(rows, in_features, dtype=dtype)
    got = kernels.small_batch_linear(x, lin.weight.detach(), lin.bias.detach())
    # fp32 accumulation and one rounding, as F.linear: only the summation order differs.
    exact = (x.double() @ lin.weight.double().T + lin.bias.double()).to(dtype)
    tol = {torch.float32: 1e-5, torch.bfloat16: 1.6e-2, torch.float16: 2e-3}[dtype]
    torch.testing.assert_close(got, exact, atol=tol, rtol=tol)
    torch.testing.assert_close(got, F.linear(x, lin.weight, lin.bias), atol=tol, rtol=tol)
    assert torch.equal(
        kernels.small_batch_linear(x, lin.weight.detach()),
        (kernels.small_batch_linear(x, lin.weight.detach(), torch.zeros_like(lin.bias))),
    )
    with pytest.raises(RuntimeError, match="dtype"):
        kernels.small_batch_linear(x, lin.weight.detach().double())


@pytest.mark.parametrize("rows", [1, 16, 40])
def test_small_batch_linear_without_inputs_gives_the_bias(kernels, rows):
    bias = torch.randn(5)
    got = kernels.small_batch_linear(torch.randn(rows, 0), torch.randn(5, 0), bias)
    assert torch.equal(got, bias.expand(rows, 5))


@pytest.mark.parametrize(
    "rows,in_features,out_features",
    [
        (1, 576, 960),
        (5, 32, 48),
        (16, 64, 48),
        (17, 64, 96),
        (32, 576, 3072),
        (32, 64, 80),
        (70, 576, 960),  # prefill chunks: 32-row chunks per pass, the last one of 6 rows
        (100, 64, 80),  # ... and the scalar tail columns
        (48, 64, 96),  # ... the last chunk of exactly 16 rows
        (300, 576, 3072),  # two blocks of rows; two groups of passes a thread (up to 3 threads)
        (530, 64, 80),  # rows split between the threads (kRowSplitRows): scalar tail, 18 rows
        (600, 576, 960),
    ],
)
def test_amx_linear_matches_the_exact_product(kernels, rows, in_features, out_features):
    if not kernels.amx_linear_available():
        pytest.skip("no AMX on this CPU")
    torch.manual_seed(0)
    lin = nn.Linear(in_features, out_features, bias=True).bfloat16()
    x = torch.randn(rows, in_features).bfloat16()
    tiles = kernels.amx_pack_weight(lin.weight.detach())
    assert tiles.shape == (out_features // 16, in_features // 32, 16, 32)
    exact = x.double() @ lin.weight.double().T
    # bf16 products are exact in fp32; only the summation order and the final rounding differ.
    torch.testing.assert_close(
        kernels.amx_linear(x, tiles, lin.bias.detach()),
        (exact + lin.bias.double()).bfloat16(),
        atol=2e-2,
        rtol=1.6e-2,
    )
    torch.testing.assert_close(
        kernels.amx_linear(x, tiles), exact.bfloat16(), atol=2e-2, rtol=1.6e-2
    )


def test_amx_linear_rejects_what_it_cannot_do(kernels):
    if not kernels.amx_linear_available():
        pytest.skip("no AMX on this CPU")
    tiles = kernels.amx_pack_weight(torch.zeros(32, 64).bfloat16())
    with pytest.raises(RuntimeError, match="no rows"):
        kernels.amx_linear(torch.zeros(0, 64).bfloat16(), tiles)
    with pytest.raises(RuntimeError, match="for this K"):
        kernels.amx_linear(torch.zeros(2, 96).bfloat16(), tiles)
    with pytest.raises(RuntimeError, match="bf16"):
        kernels.amx_linear(torch.zeros(2, 64), tiles)
    with pytest.raises(RuntimeError, match="multiple of 16"):
        kernels.amx_pack_weight(torch.zeros(40, 64).bfloat16())


@pytest.mark.parametrize("int8", [False, True])
def test_amx_linears_give_a_row_the_same_bits_whichever_way_the_threads_split(kernels, int8):
    """Below kRowSplitRows the threads split the output columns, from it the rows: a row's
    result is the same bits either way, and the same as in a call of fewer rows."""
    if not (kernels.amx_int8_linear_available() if int8 else kernels.amx_linear_available()):
        pytest.skip("no AMX (with AVX512-BF16 for int8) on this CPU")
    torch.manual_seed(0)
    lin = nn.Linear(576, 960, bias=True).bfloat16()
    x = torch.randn(1100, 576).bfloat16()
    if int8:
        q = Int8Linear(lin)
        tiles = kernels.amx_pack_weight(q.qweight)

        def run(rows: torch.Tensor) -> torch.Tensor:
            return kernels.amx_int8_linear(rows, tiles, q.scale, lin.bias.detach())
    else:
        tiles = kernels.amx_pack_weight(lin.weight.detach())

        def run(rows: torch.Tensor) -> torch.Tensor:
            return kernels.amx_linear(rows, tiles, lin.bias.detach())

    whole = run(x)
    assert torch.equal(whole, torch.cat([run(x[:100]), run(x[100:611]), run(x[611:])]))
    assert torch.equal(whole[:40], run(x[:40]))


@pytest.mark.parametrize(
    "rows,in_features,out_features",
    [
        (1, 576, 960),
        (5, 32, 48),  # the scalar tail columns (N % 64 != 0 at up to 16 rows)
        (16, 64, 48),
        (17, 64, 96),
        (32, 576, 3072),
        (33, 64, 80),  # two row chunks: the second runs on the widened tiles; scalar tail
        (70, 576, 960),
        (130, 64, 96),
        (300, 576, 3072),  # more passes than a group's for one thread
        (530, 64, 96),  # rows split between the threads, each widening its own tiles
        (600, 576, 3072),
    ],
)
def test_amx_int8_linear_matches_the_exact_int8_product(kernels, rows, in_features, out_features):
    if not kernels.amx_int8_linear_available():
        pytest.skip("no AMX with AVX512-BF16 on this CPU")
    torch.manual_seed(0)
    lin = nn.Linear(in_features, out_features, bias=True).bfloat16()
    q = Int8Linear(lin)
    x = torch.randn(rows, in_features).bfloat16()
    tiles = kernels.amx_pack_weight(q.qweight)
    assert tiles.dtype == torch.int8 and tiles.shape == (
        out_features // 16,
        in_features // 32,
        16,
        32,
    )
    # As int8_linear: the int8 weights are exact in bf16, products exact in fp32; the scaled
    # product is rounded to bf16, then the bias added.
    exact = ((x.double() @ q.qweight.double().T) * q.scale.double()).bfloat16()
    tol = {"atol": 2e-2, "rtol": 1.6e-2}
    torch.testing.assert_close(kernels.amx_int8_linear(x, tiles, q.scale), exact, **tol)
    torch.testing.assert_close(
        kernels.amx_int8_linear(x, tiles, q.scale, lin.bias.detach()),
        (exact.double() + lin.bias.double()).bfloat16(),
        **tol,
    )
    torch.testing.assert_close(
        kernels.amx_int8_linear(x, tiles, q.scale),
        kernels.int8_linear(x, q.qweight, q.scale),
        **tol,
    )
    with pytest.raises(RuntimeError, match="scale must be bf16"):
        kernels.amx_int8_linear(x, tiles, q.scale.float())
    with pytest.raises(RuntimeError, match="must hold int8 weights"):
        kernels.amx_int8_linear(x, kernels.amx_pack_weight(lin.weight.detach()), q.scale)
    with pytest.raises(RuntimeError, match="must hold bf16 weights"):
        kernels.amx_linear(x, tiles)
    with pytest.raises(RuntimeError, match="for this K"):
        kernels.amx_int8_linear(x[:, :-32].contiguous(), tiles, q.scale)


def test_a_decode_linear_hands_its_first_rows_to_few_rows(kernels):
    """Up to kernel_rows rows go to `few_rows` (its own kind and weights), both in the call and
    in silu_mul; more rows to the layer's own kind. Kinds whose kernel_rows is their own take
    none, and few_rows must give the layer's outputs with a kernel of ours."""
    torch.manual_seed(0)
    gate_up = torch.randn(64, 128)
    q = Int8Linear(nn.Linear(128, 64, bias=False))
    few = kernels.DecodeLinear("int8", q.qweight, q.scale)
    d = kernels.DecodeLinear("dense", gate_up, kernel_rows=3, few_rows=few)
    for rows in (1, 3, 4, 9):
        x = torch.randn(rows, 128)
        want_by = few if rows <= 3 else kernels.DecodeLinear("dense", gate_up)
        assert torch.equal(d(x), want_by(x))
        assert torch.equal(d.silu_mul(x), want_by.silu_mul(x))
        out = torch.empty(rows, 32)
        assert d.silu_mul(x, out=out) is out and torch.equal(out, want_by.silu_mul(x))
    with pytest.raises(RuntimeError, match="takes no few_rows"):
        kernels.DecodeLinear("int8", q.qweight, q.scale, kernel_rows=3, few_rows=few)
    with pytest.raises(RuntimeError, match="the same 32 outputs"):
        kernels.DecodeLinear("dense", gate_up[:32], kernel_rows=3, few_rows=few)
    with pytest.raises(RuntimeError, match="up to kernel_rows rows"):  # few_rows' aten path
        few_short = kernels.DecodeLinear("int8", q.qweight, q.scale, kernel_rows=2)
        kernels.DecodeLinear("dense", gate_up, kernel_rows=3, few_rows=few_short)


def test_int8_linear_layer_packs_for_amx_and_keeps_its_results(kernels):
    if not kernels.amx_int8_linear_available():
        pytest.skip("no AMX with AVX512-BF16 on this CPU")
    torch.manual_seed(0)
    lin = nn.Linear(576, 960, bias=True).bfloat16()
    rows = (1, VNNI_ROWS_ON_AMX, VNNI_ROWS_ON_AMX + 1, 40, 200)
    xs = [torch.randn(n, 576).bfloat16() for n in rows]
    before = [Int8Linear(lin)(x) for x in xs]  # aten's int8 matmul: the path without C++
    q = KernelInt8Linear(lin, kernels)
    assert q.qweight is None and q.tile_qweight.dtype == torch.int8
    assert q.vnni_qweight.dtype == torch.uint8  # a few rows' copy for the VNNI kernel
    for x, want in zip(xs, before, strict=True):
        if x.shape[0] <= VNNI_ROWS_ON_AMX:  # x rounded to 8 bits
            assert (q(x) - want).abs().max() <= 0.02 * want.abs().max()
            want = kernels.vnni_int8_linear(x, q.vnni_qweight, q.scale, q.bias)
            assert torch.equal(q(x), want)
        else:
            torch.testing.assert_close(q(x), want, atol=2e-2, rtol=1.6e-2)
            assert torch.equal(q(x), kernels.amx_int8_linear(x, q.tile_qweight, q.scale, q.bias))
    assert q.decode_linear() is not None
    assert q(torch.zeros(0, 576).bfloat16()).shape == (0, 960)
    # Shapes AMX cannot tile keep the plain int8 weight and the vector kernel.
    odd = KernelInt8Linear(nn.Linear(40, 70).bfloat16(), kernels)
    assert odd.tile_qweight is None and odd.qweight is not None
    x = torch.randn(3, 40).bfloat16()
    torch.testing.assert_close(odd(x), kernels.int8_linear(x, odd.qweight, odd.scale, odd.bias))


def vnni_quantize_reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """What vnni_int8_linear does to x [M, K]: per block of 64 inputs, scale = max|x| / 127 and
    q = round(x / scale) clamped to [-127, 127] (0 where the block is all zeros): (q [M, K] float,
    scale [M, K/64])."""
    blocks = x.float().view(x.shape[0], -1, 64)
    scale = blocks.abs().amax(2, keepdim=True) / 127
    q = torch.where(
        scale > 0, torch.round(blocks / scale).clamp(-127, 127), torch.zeros_like(blocks)
    )
    return q.view_as(x.float()), scale.squeeze(2)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    "rows,in_features,out_features",
    [(1, 576, 960), (3, 64, 16), (4, 128, 32), (7, 1536, 576), (33, 576, 80), (130, 64, 96)],
)
def test_vnni_int8_linear_matches_the_blockwise_int8_product(
    kernels, dtype, rows, in_features, out_features
):
    if not kernels.vnni_int8_linear_available():
        pytest.skip("no AVX512-VNNI on this CPU")
    torch.manual_seed(0)
    lin = nn.Linear(in_features, out_features, bias=True).to(dtype)
    q = Int8Linear(lin)
    x = torch.randn(rows, in_features).to(dtype)
    x[0, :64] = 0  # a block of zeros: scale 0
    x[-1, 5] = 300.0  # an outlier sets its block's scale alone
    packed = kernels.vnni_pack_weight(q.qweight)
    assert packed.dtype == torch.uint8 and packed.shape == (
        out_features // 16,
        in_features // 4,
        16,
        4,
    )
    # The int8 x int8 sums are exact; only the fp32 sum of the blocks' scaled sums may round.
    xq, xs = vnni_quantize_reference(x)
    xq = (xq.double().view(rows, -1, 64) * xs.double()[:, :, None]).view(rows, in_features)
    exact = (xq @ q.qweight.double().T) * q.scale.double()
    tol = {torch.float32: 1e-5, torch.bfloat16: 1.6e-2, torch.float16: 2e-3}[dtype]
    got = kernels.vnni_int8_linear(x, packed, q.scale)
    assert got.shape == (rows, out_features) and got.dtype == dtype
    torch.testing.assert_close(got, exact.to(dtype), atol=tol, rtol=tol)
    want = (exact.to(dtype).double() + lin.bias.double()).to(dtype)  # rounded, then the bias
    torch.testing.assert_close(
        kernels.vnni_int8_linear(x, packed, q.scale, lin.bias.detach()), want, atol=tol, rtol=tol
    )
    if rows > 1:  # the rows without the outlier stay close to weight-only int8 (x unrounded)
        weight_only = kernels.int8_linear(x, q.qweight, q.scale).double()[:-1]
        assert (got.double()[:-1] - weight_only).abs().max() <= 0.02 * weight_only.abs().max()


def test_vnni_packed_layout_is_4_inputs_of_16_outputs_a_tasks_tiles_interleaved(kernels):
    """Plus 128, tile n holds inputs 4p..4p + 3 of outputs 16n..16n + 15; a task's tiles (3, the
    last task what is left: here 5 tiles, a task of 3 and one of 2) are interleaved 4 inputs at a
    time, so the task is one stream: [K/4][tiles][16][4]."""
    if not kernels.vnni_int8_linear_available():
        pytest.skip("no AVX512-VNNI on this CPU")
    n_out, k = 80, 64
    w = (torch.arange(n_out * k).reshape(n_out, k) % 255 - 127).to(torch.int8)
    want = (w.to(torch.int16) + 128).to(torch.uint8)
    assert_tile_tasks(kernels.vnni_pack_weight(w).reshape(-1), want, group=4)


def test_vnni_int8_linear_rejects_what_it_cannot_run(kernels):
    if not kernels.vnni_int8_linear_available():
        with pytest.raises(RuntimeError, match="without AVX512-VNNI"):
            kernels.vnni_pack_weight(torch.zeros(16, 64, dtype=torch.int8))
        return
    w = torch.zeros(32, 128, dtype=torch.int8)
    packed = kernels.vnni_pack_weight(w)
    x, scale = torch.randn(2, 128), torch.ones(32)
    with pytest.raises(RuntimeError, match="K % 64 == 0"):
        kernels.vnni_pack_weight(torch.zeros(32, 96, dtype=torch.int8))
    with pytest.raises(RuntimeError, match="N % 16 == 0"):
        kernels.vnni_pack_weight(torch.zeros(24, 64, dtype=torch.int8))
    with pytest.raises(RuntimeError, match=r"\[-127, 127\]"):
        kernels.vnni_pack_weight(torch.full((16, 64), -128, dtype=torch.int8))
    with pytest.raises(RuntimeError, match="must be int8"):
        kernels.vnni_pack_weight(torch.zeros(16, 64))
    with pytest.raises(RuntimeError, match="x has 64 inputs, the weights 128"):
        kernels.vnni_int8_linear(x[:, :64].contiguous(), packed, scale)
    with pytest.raises(RuntimeError, match="scale must be"):
        kernels.vnni_int8_linear(x, packed, scale.bfloat16())
    with pytest.raises(RuntimeError, match="must come from vnni_pack_weight"):
        kernels.vnni_int8_linear(x, w, scale)
    with pytest.raises(RuntimeError, match="K % 64 == 0"):  # a look-alike of a K = 96 weight
        kernels.vnni_int8_linear(
            torch.randn(2, 96), torch.zeros(2, 24, 16, 4, dtype=torch.uint8), scale
        )
    assert kernels.vnni_int8_linear(x[:0], packed, scale).shape == (0, 32)
    # A subnormal block: max|x| / 127 rounds to the smallest float, x / scale to 189: clamped.
    tiny = torch.full((1, 128), 2.65e-43)
    xq, xs = vnni_quantize_reference(tiny)
    assert xq.max() == 127
    want = (xq.double().view(1, 2, 64) * xs.double()[:, :, None]).sum((1, 2))
    got = kernels.vnni_int8_linear(
        tiny, kernels.vnni_pack_weight(torch.ones(32, 128, dtype=torch.int8)), torch.ones(32)
    )
    torch.testing.assert_close(got.double(), want.expand(1, 32), rtol=1e-3, atol=0)
    x[1, 70] = float("nan")  # a NaN reaches its row's outputs, as in a matmul, and only those
    y = kernels.vnni_int8_linear(
        x, kernels.vnni_pack_weight(torch.ones(32, 128, dtype=torch.int8)), scale
    )
    assert y[1].isnan().all() and not y[0].isnan().any()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_int8_linear_layer_packs_for_vnni(kernels, dtype):
    if not kernels.vnni_int8_linear_available():
        pytest.skip("no AVX512-VNNI on this CPU")
    if dtype == torch.bfloat16 and kernels.amx_int8_linear_available():
        pytest.skip("bf16 layers take the AMX kernel here")
    torch.manual_seed(0)
    lin = nn.Linear(576, 960, bias=True).to(dtype)
    xs = [torch.randn(n, 576).to(dtype) for n in (1, 8, 40)]
    before = [Int8Linear(lin)(x) for x in xs]  # aten's weight-only int8 matmul: without C++
    q = KernelInt8Linear(lin, kernels)
    assert q.qweight is None and q.vnni_qweight.dtype == torch.uint8  # one copy of the weights
    for x, want in zip(xs, before, strict=True):
        got = q(x)
        assert (got - want).abs().max() <= 0.02 * want.abs().max()  # x rounded to 8 bits
        torch.testing.assert_close(
            got, kernels.vnni_int8_linear(x, q.vnni_qweight, q.scale, q.bias)
        )
    assert q.decode_linear() is not None
    assert q(torch.zeros(0, 576).to(dtype)).shape == (0, 960)
    # Inputs not a multiple of 64 keep the plain int8 weight and the vector kernel.
    odd = KernelInt8Linear(nn.Linear(96, 64).to(dtype), kernels)
    assert odd.vnni_qweight is None and odd.qweight is not None
    x = torch.randn(3, 96).to(dtype)
    torch.testing.assert_close(odd(x), kernels.int8_linear(x, odd.qweight, odd.scale, odd.bias))


class _NoAmx:
    """The kernels module as a CPU without AMX offers it."""

    def __init__(self, kernels: object) -> None:
        self.kernels = kernels

    def amx_linear_available(self) -> bool:
        return False

    def __getattr__(self, name: str) -> object:
        return getattr(self.kernels, name)


@pytest.mark.skipif(not can_pack(torch.bfloat16, torch.device("cpu")), reason="no oneDNN")
@pytest.mark.parametrize("amx", [True, False])
def test_packed_linear_sends_kernel_rows_to_a_kernel_and_the_rest_to_onednn(kernels, amx):
    if amx and not kernels.amx_linear_available():
        pytest.skip("no AMX on this CPU")
    torch.manual_seed(0)
    lin = nn.Linear(576, 960, bias=False).bfloat16()
    packed = KernelPackedLinear(lin, kernels if amx else _NoAmx(kernels))
    limit = AMX_ROWS if amx else SMALL_BATCH_ROWS
    few = DPBF16_ROWS_ON_AMX if amx and packed.few_rows_weight is not None else 0
    row_counts = sorted({1, few, few + 1, limit, limit + 1} - {0})
    xs = {rows: torch.randn(rows, 576).bfloat16() for rows in row_counts}
    for rows, x in xs.items():
        got = packed(x)
        torch.testing.assert_close(got, F.linear(x, lin.weight), atol=2e-2, rtol=1.6e-2)
        decode, max_rows = packed.decode_linear()  # the decoder stack's: the same kernels
        assert max_rows == limit
        if rows <= limit:
            assert torch.equal(decode(x), got), rows
    x = torch.randn(2, 2, 576).bfloat16()
    torch.testing.assert_close(packed(x), F.linear(x, lin.weight), atol=2e-2, rtol=1.6e-2)
    assert packed(torch.zeros(0, 576).bfloat16()).shape == (0, 960)  # no rows: oneDNN
    # Which copy of the weights each row count reads: zero one copy at a time, in the order
    # the layer hands rows on (few rows, then the kernel's, then oneDNN's), and watch which
    # outputs go to zero.
    copies = [(few, packed.few_rows_weight)] if few else []
    copies.append((limit, packed.tile_weight if amx else packed.weight))
    for upto, weight in copies:
        weight.zero_()
        for rows, x in xs.items():
            assert (packed(x).count_nonzero() == 0) == (rows <= upto), (upto, rows)


@pytest.mark.skipif(not can_pack(torch.bfloat16, torch.device("cpu")), reason="no oneDNN")
def test_packed_linear_gated_runs_silu_mul_in_the_few_rows_epilogue(kernels):
    if not kernels.amx_linear_available():
        pytest.skip("no AMX on this CPU: bf16 layers are KernelDpbf16Linear")
    torch.manual_seed(0)
    lin = nn.Linear(576, 2 * 96, bias=False).bfloat16()  # [gate; up], I = 96
    layer = KernelPackedLinear(lin, kernels, gated=True)
    assert layer.few_rows_weight is not None and DPBF16_ROWS_ON_AMX > 0
    for rows in (1, DPBF16_ROWS_ON_AMX, DPBF16_ROWS_ON_AMX + 1, AMX_ROWS + 1):
        x = torch.randn(rows, 576).bfloat16()
        y = F.linear(x.float(), lin.weight.float())
        want = F.silu(y[:, :96]) * y[:, 96:]
        got = layer.silu_mul(x)
        torch.testing.assert_close(got.float(), want, atol=3e-2, rtol=2e-2)
        torch.testing.assert_close(layer(x).float(), y, atol=3e-2, rtol=2e-2)  # in order
        if rows <= DPBF16_ROWS_ON_AMX:  # from the epilogue of the gated copy
            assert torch.equal(
                got, kernels.dpbf16_gated_linear(x, layer.few_rows_weight, None, True)
            )
    assert layer.silu_mul(torch.randn(2, 3, 576).bfloat16()).shape == (2, 3, 96)


@pytest.mark.skipif(not can_pack(torch.bfloat16, torch.device("cpu")), reason="no oneDNN")
def test_packed_linear_gated_takes_more_rows_on_amx_than_a_plain_one(kernels):
    """A gated projection's AMX kernel runs up to AMX_GATED_ROWS (a long prompt's step), a plain
    one's up to AMX_ROWS; beyond, oneDNN. Seen by zeroing the tile copy of the weights."""
    if not kernels.amx_linear_available():
        pytest.skip("no AMX on this CPU: bf16 layers are KernelDpbf16Linear")
    torch.manual_seed(0)
    for gated, limit in ((True, AMX_GATED_ROWS), (False, AMX_ROWS)):
        lin = nn.Linear(64, 2 * 32, bias=False).bfloat16()
        layer = KernelPackedLinear(lin, kernels, gated=gated)
        assert layer.decode_linear()[1] == limit
        xs = {rows: torch.randn(rows, 64).bfloat16() for rows in (AMX_ROWS + 1, limit + 1)}
        assert layer.tile_weight is not None
        layer.tile_weight.zero_()
        for rows, x in xs.items():
            out = layer.silu_mul(x) if gated else layer(x)
            assert (out.count_nonzero() == 0) == (rows <= limit), (gated, rows)


def test_dense_kernel_rows_by_vector_width():
    assert dense_kernel_rows(0) == 0  # scalar loops: aten's linear only
    assert dense_kernel_rows(8) == AVX2_KERNEL_ROWS
    assert dense_kernel_rows(16) == 0  # AVX-512: aten's, as measured there


def _widened_linear(x, weight, bias):
    """aten's fp32 linear on x and the weight widened to fp32, back in x's dtype."""
    wide_bias = None if bias is None else bias.float()
    return F.linear(x.float(), weight.float(), wide_bias).to(x.dtype)


@pytest.mark.parametrize(
    ("dtype", "pack"), [(torch.float32, True), (torch.float32, False), (torch.bfloat16, True)]
)
def test_dense_linear_sends_kernel_rows_to_the_kernel_and_the_rest_to_onednn_or_aten(
    kernels, dtype, pack
):
    """Up to `kernel_rows` rows the kernel; beyond, oneDNN's matmul on the packed copy of an
    fp32 weight, else aten's fp32 linear (bf16 weights widened; the LM head, unpacked)."""
    torch.manual_seed(0)
    lin = nn.Linear(576, 960).to(dtype)
    w, b = lin.weight.detach(), lin.bias.detach()
    dense = KernelDenseLinear(lin, kernels, kernel_rows=3, pack_many_rows=pack)
    packed = dense.packed_weight
    assert (packed is not None) == (pack and dtype == torch.float32 and can_pack_fp32())
    told_apart = set()  # (rows <= 3) where the two paths' bits differ: the checks mean something
    onednn_not_aten = False  # the packed path's bits differ from aten's somewhere
    for shape in ([1, 576], [3, 576], [1, 3, 576], [4, 576], [9, 576], [200, 576]):
        x = torch.randn(shape).to(dtype)
        x2 = x.reshape(-1, 576)
        kernel, aten = kernels.small_batch_linear(x2, w, b), _widened_linear(x2, w, b)
        many = aten
        if packed is not None:
            many = torch.ops.mkldnn._linear_pointwise(x2, packed, b, "none", [], "")
            onednn_not_aten |= not torch.equal(many, aten)
        if not torch.equal(kernel, many):
            told_apart.add(x2.shape[0] <= 3)
        want = kernel if x2.shape[0] <= 3 else many
        assert torch.equal(dense(x), want.view(*shape[:-1], 960))
    if dtype == torch.float32:  # bf16 outputs round the two fp32 sums alike, nearly always
        assert told_apart == {True, False}
    assert onednn_not_aten == (packed is not None)
    assert dense(torch.zeros(0, 576).to(dtype)).shape == (0, 960)
    # The decoder stack runs the same C++ object: any step through it.
    decode, max_rows = dense.decode_linear()
    assert decode is dense.linear and max_rows > 10**9


def test_cpu_backend_packs_fp32_layers_for_many_rows_but_not_the_lm_head(cpu_backend, kernels):
    """On AVX2 CPUs every fp32 decoder linear keeps a oneDNN-packed copy for prefill chunks; the
    LM head (tied to the embedding here) runs that many rows only for prompt logprobs, so it keeps
    its one shared weight."""
    if kernels.vector_lanes() != 8:
        pytest.skip("KernelDenseLinear is the AVX2 path; this CPU runs other kernels")

    class Tiny(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.embed = nn.Embedding(50, 16)
            self.layers = nn.ModuleList([nn.Linear(16, 32), nn.Linear(32, 16)])
            self.lm_head = nn.Linear(16, 50, bias=False)
            self.lm_head.weight = self.embed.weight

    model = Tiny()
    cpu_backend.prepare_model(model)
    assert all(isinstance(m, KernelDenseLinear) for m in (*model.layers, model.lm_head))
    assert all(m.packed_weight is not None for m in model.layers) == can_pack_fp32()
    assert model.lm_head.packed_weight is None
    assert model.lm_head.weight.data_ptr() == model.embed.weight.data_ptr()


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_int8_linear_widens_its_weight_past_kernel_rows_on_avx2(kernels, dtype):
    """On CPUs with AVX2 only, prefill chunks multiply the int8 weight widened to fp32 by aten's
    sgemm (faster there than the streaming kernel past `AVX2_KERNEL_ROWS` rows); decodes keep
    the kernel. Elsewhere the kernel takes any row count."""
    torch.manual_seed(0)
    lin = nn.Linear(576, 192).to(dtype)
    q = KernelInt8Linear(lin, kernels)
    if q.qweight is None:
        pytest.skip("this CPU packs int8 weights for AMX or VNNI")
    assert q.scale.dtype == dtype
    avx2 = kernels.vector_lanes() == 8
    wide = q.qweight.float() * q.scale.float()[:, None]
    for rows in (1, AVX2_KERNEL_ROWS, AVX2_KERNEL_ROWS + 1, 300):
        x = torch.randn(rows, 576).to(dtype)
        kernel = kernels.int8_linear(x, q.qweight, q.scale, q.bias)
        aten = _widened_linear(x, wide, q.bias)
        assert rows == 1 or not torch.equal(kernel, aten)  # the paths tell apart by their bits
        want = aten if avx2 and rows > AVX2_KERNEL_ROWS else kernel
        assert torch.equal(q(x), want)
    assert q.decode_linear()[0] is q.linear


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_int8_dequantize_is_the_weight_times_its_row_scale(kernels, dtype):
    torch.manual_seed(0)
    weight = torch.randint(-127, 128, (37, 72), dtype=torch.int8)
    scale = (torch.rand(37) / 64).to(dtype)
    got = kernels.int8_dequantize(weight, scale)
    assert got.dtype == torch.float32
    assert torch.equal(got, weight.float() * scale.float()[:, None])


def test_a_fresh_prompt_attends_causally_to_its_own_keys_without_the_cache():
    """One sequence with nothing cached: plain causal SDPA, same result as the gathered path."""
    torch.manual_seed(2)
    block_size, heads, kv_heads, head_dim, n = 4, 6, 2, 16, 11
    blocks = [5, 1, 7]
    meta = AttentionMetadata(
        query_start_loc=torch.tensor([0, n]),
        context_lens=torch.tensor([n]),
        slot_mapping=torch.tensor([blocks[p // 4] * 4 + p % 4 for p in range(n)]),
        block_tables=torch.tensor([blocks]),
        query_lens=[n],
        context_lens_host=[n],
        num_decode_seqs=0,
        block_size=block_size,
    )
    q = torch.randn(n, heads, head_dim)
    k, v = torch.randn(n, kv_heads, head_dim), torch.randn(n, kv_heads, head_dim)
    attention = ReferenceAttention()
    outs = []
    for fresh in (True, False):
        step = attention.prepare(meta)
        (group,) = step.groups
        assert group.fresh
        step = dataclasses.replace(step, groups=(dataclasses.replace(group, fresh=fresh),))
        caches = [torch.randn(8, kv_heads, block_size, head_dim) for _ in range(2)]
        outs.append(attention.forward(q, k, v, LayerCache(*caches), step, head_dim**-0.5))
        for cache, new in zip(caches, (k, v), strict=True):  # written either way
            assert torch.equal(cache[meta.slot_mapping // 4, :, meta.slot_mapping % 4], new)
    torch.testing.assert_close(outs[0], outs[1], atol=1e-5, rtol=1e-5)


def _chunk_meta(chunks: list[tuple[int, int]], block_size: int = 4) -> AttentionMetadata:
    """One step: (cached tokens, new tokens) per sequence, blocks numbered consecutively."""
    tables, slots, starts, next_block = [], [], [0], 1
    for cached, new in chunks:
        n_blocks = -(-(cached + new) // block_size)
        table = list(range(next_block, next_block + n_blocks))
        next_block += n_blocks
        tables.append(table)
        slots += [
            table[p // block_size] * block_size + p % block_size
            for p in range(cached, cached + new)
        ]
        starts.append(starts[-1] + new)
    width = max(len(t) for t in tables)
    return AttentionMetadata(
        query_start_loc=torch.tensor(starts),
        context_lens=torch.tensor([c + n for c, n in chunks]),
        slot_mapping=torch.tensor(slots),
        block_tables=torch.tensor([t + [0] * (width - len(t)) for t in tables]),
        query_lens=[n for _, n in chunks],
        context_lens_host=[c + n for c, n in chunks],
        num_decode_seqs=sum(1 for _, n in chunks if n == 1),
        block_size=block_size,
    )


@pytest.mark.parametrize("cache_dtype", ["model", "int8"])
@pytest.mark.parametrize(
    "chunks,path",
    [
        (
            [(9, 1), (0, 20), (5, 7)],
            "per_token",
        ),  # a decode, a fresh prompt, a chunk after a prefix
        ([(0, 70)], "per_token"),  # the served workload's prompt
        ([(0, 70)] * 7, "per_token"),  # a wave of prompts: 490 tokens, 17k keys
        ([(0, 320)], "prefill_kernel"),  # one long prompt: 51k keys, past PER_TOKEN_MAX_KEYS
        ([(900, 60)], "prefill_kernel"),  # few tokens deep in a context: too many keys
        # Questions after a shared prefix, beside a decode: 74k keys.
        ([(9, 1), (600, 30), (601, 29), (603, 31), (602, 32)], "prefill_kernel"),
        ([(1000, 32), (1000, 33)], "prefill_kernel"),  # tiles of 32 queries and of 1
        ([(9, 1), (0, 300), (40, 100)], "prefill_kernel"),  # a decode, a fresh prompt, a chunk
    ],
)
def test_prefill_steps_take_their_path_and_match_the_reference_backend(
    kernels, chunks, path, cache_dtype
):
    """Each step's prefill chunks go one way: every token through the decode kernel (few keys
    in all) or the chunks through the prefill kernel; both attend as the reference backend
    (SDPA over the gathered blocks) does and write the same cache slots."""
    torch.manual_seed(3)
    heads, kv_heads, head_dim = 6, 2, 64
    meta = _chunk_meta(chunks)
    n = int(meta.query_start_loc[-1])
    q = torch.randn(n, heads, head_dim)
    k, v = torch.randn(n, kv_heads, head_dim), torch.randn(n, kv_heads, head_dim)
    shape = (int(meta.block_tables.max()) + 1, kv_heads, 4, head_dim)
    if cache_dtype == "model":
        caches = [torch.randn(shape) for _ in range(2)]
    else:
        codes = [torch.randint(-127, 128, shape, dtype=torch.int8) for _ in range(2)]
        caches = [*codes, *(torch.rand(shape[:3]) / 64 for _ in range(2))]
    outs, written = _through_both_backends(q, k, v, caches, meta, head_dim**-0.5)
    step = KernelPagedAttention(kernels).prepare(meta)
    taken = (
        "per_token" if step.per_token
        else "prefill_kernel" if isinstance(step.prefill, KernelPrefill)
        else "decode"
    )  # fmt: skip
    assert taken == path
    # The whole step through the kernel (and so the decoder stack) or not.
    assert step.kernel_only == (path == "per_token" or meta.num_decode_seqs == meta.num_seqs)
    # The int8 decode kernel rounds the queries to int8 too; a fresh prompt on the reference
    # path attends its K/V unrounded.
    tol = 1e-5 if cache_dtype == "model" else 3e-2
    torch.testing.assert_close(outs[1], outs[0], atol=tol, rtol=tol)
    for ref, got in zip(written[0], written[1], strict=True):
        assert torch.equal(ref, got)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,vocab", [(1, 49152), (4, 7), (3, 16), (2, 33), (32, 1000)])
def test_argmax_rows_matches_torch_max(kernels, dtype, rows, vocab):
    torch.manual_seed(0)
    logits = torch.randn(rows, vocab).to(dtype)
    with_nans = logits.clone()
    with_nans[0, -1] = with_nans[-1, vocab // 2] = with_nans[0, 1] = float("nan")
    cases = {
        "random": logits,
        "ties": logits.round(),  # the first maximal index wins
        "nans": with_nans,  # the first NaN, as torch.max
        "a NaN last": torch.where(torch.arange(vocab) == vocab - 1, float("nan"), logits),
        "all -inf": torch.full_like(logits, float("-inf")),
        "strided rows": torch.randn(rows, vocab + 5).to(dtype)[:, :vocab],
    }
    for name, x in cases.items():
        ids, maxima = kernels.argmax_rows(x)
        want = x.max(dim=-1)
        assert ids.dtype == torch.long and torch.equal(ids, want.indices), name
        assert maxima.dtype == torch.float32, name
        torch.testing.assert_close(maxima, want.values.float(), rtol=0, atol=0, equal_nan=True)
    with pytest.raises(RuntimeError, match="contiguous rows"):
        kernels.argmax_rows(logits.t())


def test_sampler_takes_greedy_tokens_from_the_kernel(kernels):
    torch.manual_seed(0)
    logits = torch.randn(5, 300).bfloat16().round()  # many ties
    greedy = SamplingParams(temperature=0.0)
    sampled = SamplingParams(temperature=0.8, seed=7)
    params = [greedy, sampled, greedy, greedy, sampled]

    class Spy:
        calls = 0

        def argmax_rows(self, x):
            Spy.calls += 1
            return kernels.argmax_rows(x)

    def run(sampler: Sampler) -> torch.Tensor:
        states = [sampler.new_row_state(p) for p in params]
        return sampler(logits.clone(), params, states, [0] * len(params)).token_ids

    plain = run(Sampler("cpu", 0, [2]))
    spied = CpuBackend(BackendOptions(CPU, attention=AttentionChoice.REFERENCE), Spy())
    assert torch.equal(run(Sampler("cpu", 0, [2], spied.argmax)), plain) and Spy.calls == 1


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("vocab", [49152, 49155, 384, 33, 7])
def test_apply_token_bitmask_matches_the_torch_version(kernels, dtype, vocab):
    from roseinfer.structured.grammar import apply_bitmask

    torch.manual_seed(0)
    words = (vocab + 31) // 32
    logits = torch.randn(6, vocab).to(dtype)
    bitmask = torch.randint(-(2**31), 2**31 - 1, (4, words), dtype=torch.int32)
    bitmask[1] = -1  # all allowed
    bitmask[2] = 0  # none allowed (whole words of -inf)
    bitmask[3, ::2] = 0
    rows = torch.tensor([5, 0, 3, 2])
    expected, got = logits.clone(), logits.clone()
    apply_bitmask(expected, bitmask, rows)
    kernels.apply_token_bitmask(got, bitmask, rows)
    assert torch.equal(got, expected)
    assert torch.equal(got[[1, 4]], logits[[1, 4]])  # rows without a grammar are untouched
    with pytest.raises(RuntimeError, match="row out of range"):
        kernels.apply_token_bitmask(got, bitmask, torch.tensor([0, 1, 2, 6]))
    with pytest.raises(RuntimeError, match="ceil"):
        kernels.apply_token_bitmask(got, bitmask[:, :-1].contiguous(), rows)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,vocab", [(1, 49152), (4, 7), (3, 16), (2, 33), (9, 1000)])
def test_logprob_passes_match_the_torch_versions(kernels, dtype, rows, vocab):
    """logsumexp_rows and count_greater_rows (logprobs' normaliser and ranks) against
    `layers.logprobs`' torch versions, on the model's dtype as on fp32."""
    from roseinfer.layers.logprobs import count_greater_rows, logsumexp_rows

    torch.manual_seed(0)
    logits = (torch.randn(rows, vocab) * 6).to(dtype)
    special = logits.clone()
    special[0, vocab // 2] = float("nan")  # NaN: the row's logsumexp is NaN, counts skip it
    special[-1, 1] = float("-inf")  # masked tokens count for nothing
    cases = {
        "random": logits,
        "ties": logits.round(),
        "special": special,
        "all -inf": torch.full_like(logits, float("-inf")),
        "an inf": torch.where(torch.arange(vocab) == vocab - 1, float("inf"), logits),
        "strided rows": (torch.randn(rows, vocab + 5) * 6).to(dtype)[:, :vocab],
    }
    for name, x in cases.items():
        want = logsumexp_rows(x)
        got = kernels.logsumexp_rows(x)
        assert got.dtype == torch.float32, name
        torch.testing.assert_close(got, want, rtol=2e-6, atol=2e-6, equal_nan=True)
        chosen = x.float()[torch.arange(rows), torch.randint(0, vocab, (rows,))]
        counts = kernels.count_greater_rows(x, chosen)
        assert counts.dtype == torch.long and torch.equal(counts, count_greater_rows(x, chosen))
    with pytest.raises(RuntimeError, match="contiguous rows"):
        kernels.logsumexp_rows(logits.t())
    with pytest.raises(RuntimeError, match="fp32"):
        kernels.count_greater_rows(logits, torch.zeros(rows, dtype=torch.float64))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rows,vocab,m", [(32, 49152, 257), (3, 49152, 5001), (4, 300, 257),
                                          (2, 7, 7), (5, 1000, 1), (3, 33, 16),
                                          (3, 49152, 49152), (2, 70000, 70000)])  # fmt: skip
def test_top_candidates_rows_are_the_stable_sorts_first(kernels, dtype, rows, vocab, m):
    """Each row's m likeliest logits and ids, as a stable descending sort puts them: equal
    logits (-0 and +0 among them) in token order, -inf rows, rows whose logits rise with the
    id (every logit beats the bar), few distinct values (the sampled bar too high), a NaN
    first."""
    torch.manual_seed(0)
    logits = (torch.randn(rows, vocab) * 3).to(dtype)
    special = logits.clone()
    special[0, ::3] = 0.0
    special[0, 1::3] = -0.0
    special[-1, : vocab // 2] = float("-inf")
    with_nan = logits.clone()
    with_nan[0, vocab // 2] = with_nan[0, vocab - 1] = float("nan")
    cases = {
        "random": logits,
        "few values": torch.randint(0, 4, (rows, vocab)).to(dtype),
        "special": special,
        "rising": torch.arange(vocab, dtype=torch.float32).expand(rows, -1).to(dtype),
        "all -inf": torch.full_like(logits, float("-inf")),
        "strided rows": (torch.randn(rows, vocab + 5) * 3).to(dtype)[:, :vocab],
    }
    for name, x in cases.items():
        values, ids = kernels.top_candidates_rows(x, m)
        want_values, want_ids = x.float().sort(dim=-1, descending=True, stable=True)
        assert values.dtype == torch.float32 and ids.dtype == torch.long, name
        assert torch.equal(ids, want_ids[:, :m]), name
        assert torch.equal(values, want_values[:, :m]), name
        assert torch.equal(values.signbit(), want_values[:, :m].signbit()), name  # (-0 stays)
    values, ids = kernels.top_candidates_rows(with_nan, m)
    nan_first = [vocab // 2, vocab - 1] if m > 1 else [vocab // 2]
    assert ids[0, : len(nan_first)].tolist() == nan_first and values[0, 0].isnan()
    rest = with_nan[0].float().masked_fill(with_nan[0].isnan(), float("-inf"))
    order = rest.sort(descending=True, stable=True).indices[: m - len(nan_first)]
    assert torch.equal(ids[0, len(nan_first) :], order)
    assert torch.equal(ids[1:], kernels.top_candidates_rows(logits, m)[1][1:])
    with pytest.raises(RuntimeError, match="contiguous rows"):
        kernels.top_candidates_rows(logits.t(), 1)
    with pytest.raises(RuntimeError, match="m must be"):
        kernels.top_candidates_rows(logits, vocab + 1)


@pytest.mark.parametrize("rows,m,vocab", [(32, 257, 49152), (3, 1, 49152), (5, 4097, 49152),
                                          (3, 49152, 49152), (2, 3000, 3000)])  # fmt: skip
def test_sample_candidates_rows_is_the_torch_draw(kernels, rows, m, vocab):
    """The draw among candidates, token for token `layers.draw.sample_candidates`: weights with
    zeros (never drawn), floored ones, u at 0 and just under 1, many u's a row; candidates
    that are the whole vocabulary (placed by id, not sorted) too."""
    from roseinfer.layers.draw import sample_candidates

    gen = torch.Generator().manual_seed(m)
    weights = torch.rand(rows, m, generator=gen) ** 4
    weights[:, 0] = 1.0  # (the likeliest's weight)
    weights[0, 1::2] = 0.0
    weights[-1, 1:] = 1.6e-38  # floored: the first weighs all but nothing
    ids = torch.stack([torch.randperm(vocab, generator=gen)[:m] for _ in range(rows)])
    for trial in range(50):
        u = torch.rand(rows, generator=gen, dtype=torch.float64)
        if trial == 0:
            u[0], u[-1] = 0.0, 1.0 - 2.0**-53
        got = kernels.sample_candidates_rows(weights, ids, u)
        assert torch.equal(got, sample_candidates(weights, ids, u)), trial
    if m == vocab and rows >= 3:  # ids not quite the vocabulary: placed part way, then sorted
        odd = ids.clone()
        odd[0, -1] = odd[0, 0]  # a duplicate, last
        odd[1, -1] = vocab  # past the vocabulary, last
        odd[2, m // 2] = -1  # negative, half way
        u = torch.rand(rows, generator=gen, dtype=torch.float64)
        got = kernels.sample_candidates_rows(weights, odd, u)
        assert torch.equal(got, sample_candidates(weights, odd, u))
    with pytest.raises(RuntimeError, match="float64"):
        kernels.sample_candidates_rows(weights, ids, u.float())


def test_logprobs_take_the_backends_passes(kernels, tiny_model_dir):
    """The sampler's logprobs and prompt logprobs run the backend's passes (the kernels here),
    and give what the torch versions give."""
    from roseinfer import LLM

    class Spy:
        calls = 0

        def __getattr__(self, name):
            if name in ("logsumexp_rows", "count_greater_rows"):
                Spy.calls += 1
            return getattr(kernels, name)

    llm = LLM(model=tiny_model_dir("llama"), dtype="float32", enforce_eager=True)
    params = SamplingParams(max_new_tokens=4, temperature=0, logprobs=3, prompt_logprobs=2)
    plain = llm.generate([[5, 9, 11, 3, 7]], params)[0]
    runner = llm.engine.runner
    spied = CpuBackend(BackendOptions(CPU, attention=AttentionChoice.REFERENCE), Spy())
    runner.sampler.logprob_ops = LogprobOps(spied.logsumexp, spied.count_greater)
    got = llm.generate([[5, 9, 11, 3, 7]], params)[0]
    assert Spy.calls >= 4  # both passes, for the prompt's and for the output's logprobs
    assert got.outputs[0].token_ids == plain.outputs[0].token_ids
    for a, b in zip(got.prompt_logprobs[1:], plain.prompt_logprobs[1:], strict=True):
        assert a.keys() == b.keys()
        for t in a:
            assert a[t].rank == b[t].rank and abs(a[t].logprob - b[t].logprob) < 1e-5
    for a, b in zip(got.outputs[0].logprobs, plain.outputs[0].logprobs, strict=True):
        assert [(t, p.rank) for t, p in a.items()] == [(t, p.rank) for t, p in b.items()]
        assert all(abs(a[t].logprob - b[t].logprob) < 1e-5 for t in a)


def reference_prefill(q, k_cache, v_cache, tables, q_lens, ctx_lens, scale):
    """Each chunk's causal attention over its sequence's keys, gathered and in float64."""
    block_size = k_cache.shape[2]
    out, row = [], 0
    for s, (n, ctx) in enumerate(zip(q_lens, ctx_lens, strict=True)):
        pos = torch.arange(ctx)
        blocks = tables[s][pos // block_size]
        keys = k_cache[blocks, :, pos % block_size].double()  # [ctx, KVH, D]
        values = v_cache[blocks, :, pos % block_size].double()
        queries = q[row : row + n].double()  # [n, H, D]
        group = q.shape[1] // k_cache.shape[1]
        keys, values = keys.repeat_interleave(group, 1), values.repeat_interleave(group, 1)
        scores = torch.einsum("qhd,khd->hqk", queries, keys) * scale
        q_pos = torch.arange(ctx - n, ctx)
        scores = scores.masked_fill(pos[None, None, :] > q_pos[None, :, None], float("-inf"))
        out.append(torch.einsum("hqk,khd->qhd", scores.softmax(-1), values))
        row += n
    return torch.cat(out)


def prefill_case(dtype, cache_dtype, block_size, head_dim, heads, kv_heads, q_lens, ctx_lens):
    """(q, the kernel's cache arguments, their values as `reference_prefill` reads them, block
    tables, query_start_loc): each sequence's blocks its own, scattered through the cache; an
    int8 cache's codes and scales dequantized as the reference path gathers them (values up to 2
    in magnitude, as the bf16 caches' normal draws). Every slot no
    sequence holds is NaN (an int8 cache's scales there), so a kernel that reads past a
    sequence's last key, or a block it does not own, shows it."""
    counts = [-(-c // block_size) for c in ctx_lens]
    num_blocks = sum(counts) + 3
    order = torch.randperm(num_blocks).tolist()
    tables = torch.zeros(len(ctx_lens), max(counts), dtype=torch.long)
    held = torch.zeros(num_blocks, block_size, dtype=torch.bool)
    for s, (n, ctx) in enumerate(zip(counts, ctx_lens, strict=True)):
        tables[s, :n] = torch.tensor(order[:n])
        order = order[n:]
        pos = torch.arange(ctx)
        held[tables[s][pos // block_size], pos % block_size] = True
    shape = (num_blocks, kv_heads, block_size, head_dim)
    free = ~held[:, None, :]  # [blocks, 1, block_size]
    if cache_dtype == "model":
        caches = [torch.randn(shape).to(dtype) for _ in range(2)]
        for c in caches:
            c.masked_fill_(free[..., None], float("nan"))
        kv = caches
    else:
        codes = [torch.randint(-127, 128, shape, dtype=torch.int8) for _ in range(2)]
        scales = [(torch.rand(shape[:3]) / 64).masked_fill(free, float("nan")) for _ in range(2)]
        caches = [*codes, *scales]
        every_block = LayerCache(*caches).gather(torch.arange(num_blocks), 1, torch.float32)
        kv = [x[0].unflatten(1, (num_blocks, block_size)).transpose(0, 1) for x in every_block]
    q = torch.randn(sum(q_lens), heads, head_dim).to(dtype)
    qsl = torch.tensor([0, *itertools.accumulate(q_lens)])
    return q, caches, kv, tables, qsl


@pytest.mark.parametrize("cache_dtype", ["model", "int8"])
@pytest.mark.parametrize("dtype", DTYPES)
def test_write_kv_cache_writes_what_layer_cache_write_writes(kernels, dtype, cache_dtype):
    """The prefill path's C++ cache write against `LayerCache.write` (the reference path's):
    the same bytes in the cache and the scales, for k and v that are views of a fused qkv row
    (token stride wider than the heads), slots across blocks in any order; a slot outside the
    cache is refused."""
    torch.manual_seed(0)
    blocks, kv_heads, block_size, head_dim, n = 9, 3, 16, 64, 37
    shape = (blocks, kv_heads, block_size, head_dim)
    qkv = torch.randn(n, (4 + 2 * kv_heads) * head_dim).to(dtype)
    k = qkv[:, 4 * head_dim : (4 + kv_heads) * head_dim].view(n, kv_heads, head_dim)
    v = qkv[:, (4 + kv_heads) * head_dim :].view(n, kv_heads, head_dim)
    slots = torch.randperm(blocks * block_size)[:n]

    def cache() -> LayerCache:
        if cache_dtype == "int8":
            codes = [torch.zeros(shape, dtype=torch.int8) for _ in range(2)]
            return LayerCache(*codes, *(torch.zeros(shape[:3]) for _ in range(2)))
        return LayerCache(*(torch.zeros(shape, dtype=dtype) for _ in range(2)))

    expected, got = cache(), cache()
    expected.write(slots // block_size, slots % block_size, k, v)
    kernels.write_kv_cache(k, v, got.k, got.v, slots, got.k_scale, got.v_scale)
    for want, have in zip(expected, got, strict=True):
        if want is not None:
            torch.testing.assert_close(have, want, atol=0, rtol=0)
    with pytest.raises(RuntimeError, match="is not in the cache"):
        kernels.write_kv_cache(k, v, got.k, got.v, slots.clone().fill_(blocks * block_size),
                               got.k_scale, got.v_scale)  # fmt: skip


@pytest.mark.parametrize("cache_dtype", ["model", "int8"])
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize(
    ("block_size", "head_dim", "heads", "kv_heads"),
    # head_dim 40: whole 16-dim vectors and a tail (bf16 pairs' value pairing, int8 codes)
    [(16, 64, 9, 3), (16, 128, 4, 4), (8, 32, 4, 2), (32, 64, 2, 1), (16, 40, 4, 2)],
)
def test_paged_prefill_attention_matches_the_reference(
    kernels, cache_dtype, dtype, block_size, head_dim, heads, kv_heads
):
    """Chunks after cached tokens and fresh prompts, lengths across block boundaries, blocks
    scattered through the cache; the tiles (32 queries) split a chunk unevenly. An int8 cache
    is attended as its dequantized values (the reference path's gather). bf16 queries take the
    AMX tile where the CPU has AMX, else the bf16-pairs tile where it has AVX512-BF16
    (`test_prefill_tiles_where_they_apply`)."""
    torch.manual_seed(0)
    q_lens, ctx_lens = [37, 1, 16, 5, 70], [37, 40, 16 + 33, 200, 70]
    q, caches, kv, tables, qsl = prefill_case(dtype, cache_dtype, block_size, head_dim, heads,
                                              kv_heads, q_lens, ctx_lens)  # fmt: skip
    scale = head_dim**-0.5
    got = kernels.paged_prefill_attention(q, *caches[:2], tables, qsl, torch.tensor(ctx_lens),
                                          scale, *caches[2:])  # fmt: skip
    expected = reference_prefill(q, *kv, tables, q_lens, ctx_lens, scale)
    tol = 1e-5 if dtype == torch.float32 else 1e-2
    assert got.dtype == dtype and got.shape == q.shape
    torch.testing.assert_close(got.double(), expected, atol=tol, rtol=tol)
    with pytest.raises(RuntimeError, match="queries must be its last tokens"):
        kernels.paged_prefill_attention(q, *caches[:2], tables, qsl,
                                        torch.tensor([37, 40, 49, 200, 69]), scale,
                                        *caches[2:])  # fmt: skip
    if cache_dtype == "int8":
        with pytest.raises(RuntimeError, match="comes with k_scale and v_scale"):
            kernels.paged_prefill_attention(q, *caches[:2], tables, qsl,
                                            torch.tensor(ctx_lens), scale)  # fmt: skip


@pytest.mark.parametrize("jump", [40.0, 120.0])
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_prefill_softmax_keeps_or_rescales_its_running_max(kernels, dtype, jump):
    """Scores that rise along the sequence, 0.05 a key (3.2 a 64-key tile: a row's running max is
    kept while its tile's scores stay within 8 of it, and moved when they pass that), then jump by
    `jump` at key 300 (every later row rescales; past 88, a weight taken against the max kept
    would overflow fp32); 340 queries after 60 cached keys, in every tile the CPU runs, against
    the float64 reference."""
    torch.manual_seed(0)
    head_dim, block_size, cached, ctx = 64, 16, 60, 400
    q, caches, kv, tables, qsl = prefill_case(dtype, "model", block_size, head_dim, 4, 2,
                                              [ctx - cached], [ctx])  # fmt: skip
    scale = head_dim**-0.5
    pos = torch.arange(ctx)
    score = 0.05 * pos + jump * (pos >= 300)
    q.fill_(1.0)  # q . k * scale = head_dim * k * scale where k's dims are all alike
    keys = (score / (head_dim * scale))[:, None, None].expand(ctx, 2, head_dim)
    caches[0][tables[0][pos // block_size], :, pos % block_size, :] = keys.to(dtype)
    args = (*caches, tables, qsl, torch.tensor([ctx]), scale)
    expected = reference_prefill(q, *kv, tables, [ctx - cached], [ctx], scale)
    tiles = ["auto"]
    if dtype == torch.bfloat16 and kernels.dpbf16_linear_available():
        tiles += ["pairs", "amx_emulated"]
    tol = 1e-4 if dtype == torch.float32 else 1e-2  # fp32 scores up to 55 move outputs by ~4e-5
    for tile in tiles:
        got = kernels.paged_prefill_attention(q, *args, tile=tile)
        torch.testing.assert_close(got.double(), expected, atol=tol, rtol=tol, msg=tile)


@pytest.mark.parametrize("cache_dtype", ["model", "int8"])
def test_prefill_weights_far_below_the_max_vanish(kernels, cache_dtype):
    """Keys whose weights fall below fp32's normal range (scores 120 under the row's max: e^-120)
    among keys at the max, in every tile the CPU runs: the bf16 tiles' exp has no clamp there, so
    such a weight comes out as 0 or a subnormal, never NaN or a wrong sum; rows whose max keys
    are still in their future (causal) weigh only their past ones."""
    torch.manual_seed(0)
    head_dim, block_size, cached, ctx = 64, 16, 40, 200
    q, caches, kv, tables, qsl = prefill_case(torch.bfloat16, cache_dtype, block_size, head_dim,
                                              4, 2, [ctx - cached], [ctx])  # fmt: skip
    scale = head_dim**-0.5
    pos = torch.arange(ctx)
    high = pos % 7 == 3  # a seventh of the keys, from key 3 on, 120 above the others
    score = torch.where(high, 60.0, -60.0)
    q.fill_(1.0)  # q . k * scale = head_dim * k * scale where k's dims are all alike
    keys = (score / (head_dim * scale))[:, None, None].expand(ctx, 2, head_dim)
    blocks, offsets = tables[0][pos // block_size], pos % block_size
    if cache_dtype == "model":
        caches[0][blocks, :, offsets, :] = keys.bfloat16()
    else:  # quantized as the engine writes them, read back as prefill_case reads its caches
        cache = LayerCache(*caches)
        cache.write(blocks, offsets, keys.float(), kv[1][blocks, :, offsets].float())
        num_blocks = caches[0].shape[0]
        every_block = cache.gather(torch.arange(num_blocks), 1, torch.float32)
        kv = [x[0].unflatten(1, (num_blocks, block_size)).transpose(0, 1) for x in every_block]
    args = (*caches[:2], tables, qsl, torch.tensor([ctx]), scale, *caches[2:])
    expected = reference_prefill(q, *kv, tables, [ctx - cached], [ctx], scale)
    tiles = ["auto"]
    if kernels.dpbf16_linear_available():
        tiles += ["pairs", "amx_emulated"]
    for tile in tiles:
        got = kernels.paged_prefill_attention(q, *args, tile=tile)
        assert torch.isfinite(got).all(), tile
        torch.testing.assert_close(got.double(), expected, atol=1e-2, rtol=1e-2, msg=tile)


def test_bf16_prefill_rounds_its_weights_to_bf16_where_the_cpu_has_avx512_bf16(kernels):
    """The fp32 tile computes bf16 inputs exactly as their fp32 values (widened, then one
    rounding at the end); the bf16-pairs tile and the AMX tile round the softmax weights to
    bf16 too, so their outputs differ from that in some places. `dpbf16_linear_available`
    shares their build condition (AVX512-BF16); without AMX, CPUs whose vdpbf16ps is slower
    than their FMAs (`bf16_pairs_by_fma`) take the fp32 tile."""
    torch.manual_seed(0)
    blocks, kv_heads, block_size, dim = 16, 2, 16, 64
    caches = [torch.randn(blocks, kv_heads, block_size, dim).bfloat16() for _ in range(2)]
    q = torch.randn(100, 4, dim).bfloat16()
    tables = torch.randperm(blocks)[:8][None]
    args = (tables, torch.tensor([0, 100]), torch.tensor([120]), dim**-0.5)
    got = kernels.paged_prefill_attention(q, *caches, *args)
    widened = kernels.paged_prefill_attention(q.float(), *(c.float() for c in caches), *args)
    torch.testing.assert_close(got.float(), widened, atol=1e-2, rtol=1e-2)
    rounds = kernels.amx_linear_available() or (
        kernels.dpbf16_linear_available() and not kernels.bf16_pairs_by_fma()
    )
    assert torch.equal(got, widened.bfloat16()) != rounds


@pytest.mark.parametrize("tile", ["amx_emulated", "amx"])
@pytest.mark.parametrize("cache_dtype", ["model", "int8"])
@pytest.mark.parametrize(
    ("block_size", "head_dim", "heads", "kv_heads"),
    # block 48: key tiles of one block (48 keys), padded to two 32-key steps of the values
    [(16, 64, 9, 3), (16, 128, 4, 4), (32, 64, 2, 1), (48, 32, 4, 2)],
)
@pytest.mark.parametrize(
    ("q_lens", "ctx_lens"),
    # the second: groups of 4 tasks or more, whose keys are paired once for all of them (odd
    # lengths: a last pair half empty), beside a group that pairs its own
    [([37, 1, 16, 5, 70], [37, 40, 16 + 33, 200, 70]), ([401, 199, 7], [501, 199, 300])],
)
def test_amx_prefill_tile_matches_the_reference(
    kernels, tile, cache_dtype, block_size, head_dim, heads, kv_heads, q_lens, ctx_lens
):
    """The AMX tile (`prefill_amx.h`) on AMX (where the CPU has it) and on emulated tiles (plain
    C++, wherever the kernels have AVX512-BF16): chunks after cached tokens and fresh prompts,
    key groups of 16 ending past a sequence's last key, 32-key steps of the values past a tile's
    last key, keys paired per task or once per group. Its products round what the pairs tile
    rounds (bf16 queries, keys, weights and values; fp32 sums), so the two stay within fp32's
    reordering of the same sums."""
    if not kernels.dpbf16_linear_available():
        pytest.skip("the AMX tile's code needs AVX512-BF16 (AMX CPUs all have it)")
    if tile == "amx" and not kernels.amx_linear_available():
        pytest.skip("this CPU or kernel offers no AMX")
    torch.manual_seed(0)
    q, caches, kv, tables, qsl = prefill_case(torch.bfloat16, cache_dtype, block_size, head_dim,
                                              heads, kv_heads, q_lens, ctx_lens)  # fmt: skip
    args = (*caches[:2], tables, qsl, torch.tensor(ctx_lens), head_dim**-0.5, *caches[2:])
    got = kernels.paged_prefill_attention(q, *args, tile=tile)
    expected = reference_prefill(q, *kv, tables, q_lens, ctx_lens, head_dim**-0.5)
    assert got.dtype == torch.bfloat16 and got.shape == q.shape
    torch.testing.assert_close(got.double(), expected, atol=1e-2, rtol=1e-2)
    pairs = kernels.paged_prefill_attention(q, *args, tile="pairs")
    torch.testing.assert_close(got.float(), pairs.float(), atol=2e-3, rtol=1e-2)


def test_amx_prefill_tile_on_random_shapes(kernels):
    """The AMX tile's layouts on emulated tiles over 40 random cases: block sizes 16-128, head
    dims 32-256, groups of 1-7 query heads, 1-4 sequences of up to 300 keys with chunks of any
    length; every output finite (the cache's free slots are NaN) and within bf16's rounding of
    the float64 reference."""
    if not kernels.dpbf16_linear_available():
        pytest.skip("the AMX tile's code needs AVX512-BF16 (AMX CPUs all have it)")
    rng = random.Random(1)
    torch.manual_seed(1)
    for _ in range(40):
        block_size = rng.choice([16, 32, 48, 64, 128])
        head_dim = rng.choice([32, 64, 128, 256])
        kv_heads, group = rng.choice([1, 2, 3]), rng.choice([1, 2, 3, 4, 7])
        ctx_lens = [rng.randint(1, 300) for _ in range(rng.randint(1, 4))]
        q_lens = [rng.randint(1, c) for c in ctx_lens]
        cache_dtype = rng.choice(["model", "int8"])
        q, caches, kv, tables, qsl = prefill_case(torch.bfloat16, cache_dtype, block_size,
                                                  head_dim, kv_heads * group, kv_heads, q_lens,
                                                  ctx_lens)  # fmt: skip
        scale = head_dim**-0.5
        args = (*caches[:2], tables, qsl, torch.tensor(ctx_lens), scale, *caches[2:])
        got = kernels.paged_prefill_attention(q, *args, tile="amx_emulated")
        expected = reference_prefill(q, *kv, tables, q_lens, ctx_lens, scale)
        case = (block_size, head_dim, kv_heads, group, q_lens, ctx_lens, cache_dtype)
        assert got.isfinite().all(), case
        torch.testing.assert_close(got.double(), expected, atol=2e-2, rtol=2e-2, msg=str(case))


def test_prefill_tiles_where_they_apply(kernels):
    """The "auto" tile is AMX's tile where the CPU has AMX, else AVX512-BF16's pairs where the
    CPU's vdpbf16ps is not slower than its FMAs (`bf16_pairs_by_fma`), else fp32; a tile asked
    for by name runs or says why not."""
    torch.manual_seed(0)
    amx, pairs = kernels.amx_linear_available(), kernels.dpbf16_linear_available()
    auto_pairs = pairs and not kernels.bf16_pairs_by_fma()
    for head_dim, block_size in [(64, 16), (40, 16), (64, 8), (64, 48)]:
        q, caches, _, tables, qsl = prefill_case(torch.bfloat16, "model", block_size, head_dim,
                                                 4, 2, [40], [90])  # fmt: skip
        args = (*caches, tables, qsl, torch.tensor([90]), head_dim**-0.5)
        fits_amx = head_dim % 32 == 0 and block_size % 16 == 0
        expected = "amx" if amx and fits_amx else "pairs" if auto_pairs else "fp32"
        assert kernels.paged_prefill_tile(q, caches[0]) == expected
        assert kernels.paged_prefill_tile(q.float(), caches[0].float()) == "fp32"
        got = kernels.paged_prefill_attention(q, *args)
        assert torch.equal(got, kernels.paged_prefill_attention(q, *args, tile=expected))
        if pairs and not fits_amx:
            with pytest.raises(RuntimeError, match="head_dim a multiple of 32 and block_size a"):
                kernels.paged_prefill_attention(q, *args, tile="amx_emulated")
    q, caches, _, tables, qsl = prefill_case(torch.bfloat16, "model", 16, 64, 4, 2, [40], [90])
    args = (*caches, tables, qsl, torch.tensor([90]), 0.125)
    if pairs and not amx:
        with pytest.raises(RuntimeError, match="no AMX"):
            kernels.paged_prefill_attention(q, *args, tile="amx")
        with pytest.raises(RuntimeError, match="no AMX"):
            kernels.paged_prefill_tile(q, caches[0], "amx")
    with pytest.raises(RuntimeError, match="tile must be 'auto'"):
        kernels.paged_prefill_attention(q, *args, tile="tiles")
    with pytest.raises(RuntimeError, match="needs AVX512-BF16, bf16 queries"):
        kernels.paged_prefill_attention(q.float(), *(c.float() for c in caches), *args[2:],
                                        tile="pairs")  # fmt: skip
