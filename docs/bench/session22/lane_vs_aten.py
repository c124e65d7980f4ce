"""The 120 linears at prefill sizes: aten's fp32 linear (MKL sgemm; bf16 weights widened per
call, as the AVX2 layers do past 128 rows) against small_batch_linear (the lane kernel), in turns
(6 turns, medians). From the repository root:

    .venv/bin/python docs/bench/session22/lane_vs_aten.py 128,256,512
"""

import sys
import time

import torch
import torch.nn.functional as F

from roseinfer.kernels import load_cpu_kernels

kernels = load_cpu_kernels()
h, inter, kv, layers = 576, 1536, 192, 30
shapes = [(h + 2 * kv, h), (h, h), (2 * inter, h), (h, inter)]


def fns(ws, wb, xs, xb):
    return {
        "aten fp32": lambda: [F.linear(xs[w.shape[1]], w) for w in ws],
        "lane fp32": lambda: [kernels.small_batch_linear(xs[w.shape[1]], w, None) for w in ws],
        "aten bf16(widened)": lambda: [F.linear(xb[w.shape[1]].float(), w.float()) for w in wb],
        "lane bf16": lambda: [kernels.small_batch_linear(xb[w.shape[1]], w, None) for w in wb],
    }


for rows in [int(r) for r in sys.argv[1].split(",")]:
    ws = [torch.randn(n, k) * 0.02 for _ in range(layers) for n, k in shapes]
    wb = [w.bfloat16() for w in ws]
    xs = {k: torch.randn(rows, k) for k in (h, inter)}
    xb = {k: v.bfloat16() for k, v in xs.items()}
    flops = sum(2 * rows * n * k for n, k in shapes) * layers
    calls = fns(ws, wb, xs, xb)
    times: dict[str, list[float]] = {name: [] for name in calls}
    for _ in range(6):
        for name, fn in calls.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    for name, ts in times.items():
        ts.sort()
        m = ts[len(ts) // 2]
        print(f"{rows:4d} {name:20s} {m * 1e3:7.1f} ms {flops / m / 1e9:5.0f} GFLOP/s")
