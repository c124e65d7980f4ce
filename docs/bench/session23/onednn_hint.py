"""The 120 decode linears (SmolLM2's shapes, random fp32 weights) at prefill sizes: aten's fp32
linear (MKL sgemm) against oneDNN's matmul on weights packed once for each batch-size hint given
(`torch.ops.mkldnn._reorder_linear_weight(w, hint)`), in turns, 5 turns, medians.

    .venv/bin/python docs/bench/session23/onednn_hint.py 64,128,300,512,1024 128,512
"""

import sys
import time

import torch
import torch.nn.functional as F

torch.manual_seed(0)
h, inter, kv, layers = 576, 1536, 192, 30
shapes = [(h + 2 * kv, h), (h, h), (2 * inter, h), (h, inter)]
ws = [torch.randn(n, k) * 0.02 for _ in range(layers) for n, k in shapes]
hints = [int(x) for x in sys.argv[2].split(",")]
packs = {hint: [torch.ops.mkldnn._reorder_linear_weight(w, hint) for w in ws] for hint in hints}
for rows in [int(r) for r in sys.argv[1].split(",")]:
    xs = {k: torch.randn(rows, k) for k in (h, inter)}
    flops = sum(2 * rows * n * k for n, k in shapes) * layers
    calls = {"aten sgemm": lambda xs=xs: [F.linear(xs[w.shape[1]], w) for w in ws]}
    for hint, p in packs.items():
        calls[f"onednn hint {hint}"] = lambda p=p, xs=xs: [
            torch.ops.mkldnn._linear_pointwise(xs[w.shape[1]], q, None, "none", [None], "")
            for w, q in zip(ws, p, strict=True)
        ]
    times: dict[str, list[float]] = {n: [] for n in calls}
    for _ in range(5):
        for name, fn in calls.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    for name, ts in times.items():
        m = sorted(ts)[len(ts) // 2]
        print(f"{rows:4d} {name:16s} {m * 1e3:7.1f} ms {flops / m / 1e9:5.0f} GFLOP/s", flush=True)
