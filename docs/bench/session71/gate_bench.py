"""SmolLM2's 30 gate_up projections (random weights, 576 -> 2 x 1,536) on AMX at M rows
(`amx_gated_linear`), bf16 and int8 tiles, with and without SiLU·mul in the epilogue, in turns
in one process: the median of 10 rounds after 2.

    .venv/bin/python docs/bench/session71/gate_bench.py [M]
"""

import statistics
import sys
import time

import torch

from roseinfer.kernels import load_cpu_kernels

k = load_cpu_kernels()
torch.manual_seed(0)
M = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
K, inter, layers = 576, 1536, 30
x = torch.randn(M, K).bfloat16()
wb = [k.amx_pack_gated((torch.randn(2 * inter, K) * 0.05).bfloat16()) for _ in range(layers)]
wq = [
    k.amx_pack_gated(torch.randint(-127, 128, (2 * inter, K), dtype=torch.int8))
    for _ in range(layers)
]
sc = torch.full((2 * inter,), 0.001).bfloat16()
runs = {
    "bf16": lambda: [k.amx_gated_linear(x, w, None, None, True, None) for w in wb],
    "int8": lambda: [k.amx_gated_linear(x, w, sc, None, True, None) for w in wq],
    "bf16_nosilu": lambda: [k.amx_gated_linear(x, w, None, None, False, None) for w in wb],
    "int8_nosilu": lambda: [k.amx_gated_linear(x, w, sc, None, False, None) for w in wq],
}
times: dict[str, list[float]] = {n: [] for n in runs}
for _ in range(12):
    for n, f in runs.items():
        s = time.perf_counter()
        f()
        times[n].append(time.perf_counter() - s)
for n, v in times.items():
    v = sorted(v[2:])
    q1, q3 = 1e3 * v[len(v) // 4], 1e3 * v[3 * len(v) // 4]
    print(f"{n}: {1e3 * statistics.median(v):.1f} ms (q {q1:.1f}-{q3:.1f})")
