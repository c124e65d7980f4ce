"""`amx_linear` at SmolLM2's qkv shape (576 -> 960, random bf16 weights, four of them in turn)
on THREADS threads (default 1) at 256 and 2,000 rows, into one output tensor: the best of 5
rounds of 8 calls, in GFLOP/s. To set beside `amx_kblock.cpp`'s rates of the same scheme.

    .venv/bin/python docs/bench/session71/amx_rate.py [THREADS]
"""

import sys
import time

import torch

from roseinfer.kernels import load_cpu_kernels

k = load_cpu_kernels()
torch.set_num_threads(int(sys.argv[1]) if len(sys.argv) > 1 else 1)
torch.manual_seed(0)
for M in (256, 2000):
    x = torch.randn(M, 576).bfloat16()
    ws = [k.amx_pack_weight((torch.randn(960, 576) * 0.05).bfloat16()) for _ in range(4)]
    out = torch.empty(M, 960).bfloat16()
    for _ in range(3):
        k.amx_linear(x, ws[0], None, out)
    best = 1e9
    for _ in range(5):
        s = time.perf_counter()
        for i in range(8):
            k.amx_linear(x, ws[i % 4], None, out)
        best = min(best, (time.perf_counter() - s) / 8)
    print(M, f"{M * 960 * 576 * 2 / best / 1e9:.0f} GFLOP/s", end="; ")
print()
