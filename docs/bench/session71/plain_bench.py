"""SmolLM2's qkv, o and down projections (random weights, 30 layers each) at M rows: oneDNN's
packed bf16 matmul (the engine's bf16 path past `AMX_ROWS`), `amx_linear` and
`amx_int8_linear`, in turns in one process: the median of 8 rounds after 2.

    .venv/bin/python docs/bench/session71/plain_bench.py [M]
"""

import statistics
import sys
import time

import torch

from roseinfer.kernels import load_cpu_kernels

k = load_cpu_kernels()
torch.manual_seed(0)
M = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
layers = 30
shapes = {"qkv": (960, 576), "o": (576, 576), "down": (576, 1536)}
runs = {}
for name, (N, K) in shapes.items():
    x = torch.randn(M, K).bfloat16()
    w = [(torch.randn(N, K) * 0.05).bfloat16() for _ in range(layers)]
    onednn = [torch.ops.mkldnn._reorder_linear_weight(t, 32) for t in w]
    tiles = [k.amx_pack_weight(t) for t in w]
    int8_tiles = [
        k.amx_pack_weight(torch.randint(-127, 128, (N, K), dtype=torch.int8)) for _ in range(layers)
    ]
    sc = torch.full((N,), 0.001).bfloat16()
    runs[f"{name}_onednn"] = lambda x=x, ws=onednn: [
        torch.ops.mkldnn._linear_pointwise(x, t, None, "none", [], "") for t in ws
    ]
    runs[f"{name}_amxbf16"] = lambda x=x, ws=tiles: [k.amx_linear(x, t, None, None) for t in ws]
    runs[f"{name}_amxint8"] = lambda x=x, ws=int8_tiles, sc=sc: [
        k.amx_int8_linear(x, t, sc, None, None) for t in ws
    ]
times: dict[str, list[float]] = {n: [] for n in runs}
for _ in range(10):
    for n, f in runs.items():
        s = time.perf_counter()
        f()
        times[n].append(time.perf_counter() - s)
for n, v in times.items():
    v = sorted(v[2:])
    q1, q3 = 1e3 * v[len(v) // 4], 1e3 * v[3 * len(v) // 4]
    print(f"{n}: {1e3 * statistics.median(v):.1f} ms (q {q1:.1f}-{q3:.1f})")
