"""The 120 decode linears (SmolLM2's shapes, 30 layers, random fp32 weights) at the given row
counts: aten's fp32 linear (MKL sgemm), oneDNN's matmul on weights packed once
(`torch.ops.mkldnn._reorder_linear_weight`, as `KernelDenseLinear` packs them) and
`small_batch_linear` (the AVX2 kernels: `gemv`, or the lane kernel), in turns; medians.

    .venv/bin/python docs/bench/session23/onednn_vs_lane.py 1,4,8,16,32,64,128,256 [TURNS]
"""

import sys
import time

import torch
import torch.nn.functional as F

from roseinfer.kernels import load_cpu_kernels

kernels = load_cpu_kernels()
torch.manual_seed(0)
h, inter, kv, layers = 576, 1536, 192, 30
shapes = [(h + 2 * kv, h), (h, h), (2 * inter, h), (h, inter)]
ws = [torch.randn(n, k) * 0.02 for _ in range(layers) for n, k in shapes]
packs = [torch.ops.mkldnn._reorder_linear_weight(w, 128) for w in ws]
turns = int(sys.argv[2]) if len(sys.argv) > 2 else 5
for rows in [int(r) for r in sys.argv[1].split(",")]:
    xs = {k: torch.randn(rows, k) for k in (h, inter)}
    flops = sum(2 * rows * n * k for n, k in shapes) * layers
    calls = {
        "aten sgemm": lambda xs=xs: [F.linear(xs[w.shape[1]], w) for w in ws],
        "onednn": lambda xs=xs: [
            torch.ops.mkldnn._linear_pointwise(xs[w.shape[1]], q, None, "none", [None], "")
            for w, q in zip(ws, packs, strict=True)
        ],
        "lane/gemv": lambda xs=xs: [
            kernels.small_batch_linear(xs[w.shape[1]], w, None) for w in ws
        ],
    }
    times: dict[str, list[float]] = {n: [] for n in calls}
    for _ in range(turns):
        for name, fn in calls.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    for name, ts in times.items():
        m = sorted(ts)[len(ts) // 2]
        print(f"{rows:4d} {name:12s} {m * 1e3:7.1f} ms {flops / m / 1e9:5.0f} GFLOP/s", flush=True)
