"""SmolLM2's 120 decode linears (random bf16 weights, 30 layers of fused qkv / o / gate-up /
down, a bias on each qkv) at 1 to 2,048 rows: `dpbf16_linear` on weights packed once against
oneDNN's matmul on its prepacked weights (what `KernelPackedLinear` runs past 4 rows on a CPU
without AMX). The better of two medians of 7 runs of all 120 layers per kernel, in turns.

    .venv/bin/python docs/bench/session25/dpbf16_vs_onednn.py 1,4,8,16,32,64,128,512,1024,2048
"""

import sys
import time

import torch

from roseinfer.kernels import load_cpu_kernels

H, INTER, KV, L = 576, 1536, 192, 30
k = load_cpu_kernels()
torch.manual_seed(0)
shapes = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L
weights = [torch.randn(n, kk).bfloat16() * 0.02 for n, kk in shapes]
biases = [torch.randn(n).bfloat16() if i % 4 == 0 else None for i, (n, _) in enumerate(shapes)]
packed = [k.dpbf16_pack_weight(w) for w in weights]
onednn = [torch.ops.mkldnn._reorder_linear_weight(w, 32) for w in weights]


def median_ms(fn, n: int = 7) -> float:
    fn()
    times = []
    for _ in range(n):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return sorted(times)[n // 2] * 1e3


with torch.inference_mode():
    for rows in [int(r) for r in sys.argv[1].split(",")]:
        xs = {kk: torch.randn(rows, kk).bfloat16() for kk in (H, INTER)}

        def dpbf16(xs=xs) -> None:
            for w, p, b in zip(weights, packed, biases, strict=True):
                k.dpbf16_linear(xs[w.shape[1]], p, b)

        def onednn_linear(xs=xs) -> None:
            for w, p, b in zip(weights, onednn, biases, strict=True):
                torch.ops.mkldnn._linear_pointwise(xs[w.shape[1]], p, b, "none", [], "")

        a, o = [], []
        for _ in range(2):
            a.append(median_ms(dpbf16))
            o.append(median_ms(onednn_linear))
        flops = 2 * rows * sum(n * kk for n, kk in shapes)
        print(
            f"{rows:4d} rows: dpbf16_linear {min(a):7.1f} ms ({flops / min(a) / 1e6:4.0f} "
            f"GFLOP/s), oneDNN packed {min(o):7.1f} ms ({flops / min(o) / 1e6:4.0f} GFLOP/s): "
            f"{min(o) / min(a):.2f}x",
            flush=True,
        )
