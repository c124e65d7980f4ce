"""Per-call time of small_batch_linear and int8_linear on tiny and SmolLM2-sized weights, warm,
best of 5 x 20,000 calls (the Python call included): what a call costs besides its work.

    PYTHONPATH=. .venv/bin/python docs/bench/session20/linear_call_overhead.py
"""

import time

import torch

from roseinfer.kernels import load_cpu_kernels

k = load_cpu_kernels()


def bench(f, n=20000):
    best = 1e9
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(n):
            f()
        best = min(best, (time.perf_counter() - t) / n)
    return best * 1e6


for dt in (torch.bfloat16, torch.float32):
    for K, N in ((64, 64), (576, 576)):
        x = torch.randn(1, K, dtype=dt)
        w = torch.randn(N, K, dtype=dt) * 0.02
        qw = torch.randint(-127, 128, (N, K), dtype=torch.int8)
        s = torch.rand(N, dtype=dt)
        print(
            dt,
            K,
            N,
            f"small_batch {bench(lambda: k.small_batch_linear(x, w)):.2f} us  int8 {bench(lambda: k.int8_linear(x, qw, s)):.2f} us",
        )
