"""Per-call cost of the small fused kernels at one row (session 20): each over a no-argument kernel
call, warm, best of 5 x 20,000 calls.

    PYTHONPATH=. .venv/bin/python docs/bench/session20/small_ops_calls.py
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


for dt in (torch.float32, torch.bfloat16):
    x = torch.randn(1, 576, dtype=dt)
    r = torch.randn(1, 576, dtype=dt)
    w = torch.randn(576, dtype=dt)
    gu = torch.randn(1, 3072, dtype=dt)
    qkv = torch.randn(1, 960, dtype=dt)
    q = qkv[:, :576].view(1, 9, 64)
    kk = qkv[:, 576:768].view(1, 3, 64)
    cos = torch.randn(1, 32, dtype=dt)
    sin = torch.randn(1, 32, dtype=dt)
    base = bench(lambda: k.vector_lanes())
    print(dt, f"python call {base:.2f} us")
    for name, f in [
        ("empty", lambda: torch.empty(1, 576, dtype=dt)),
        ("rms_norm", lambda: k.rms_norm(x, w, 1e-5)),
        ("add_rms_norm", lambda: k.add_rms_norm(x, r, w, 1e-5)),
        ("silu_and_mul", lambda: k.silu_and_mul(gu)),
        ("rotary", lambda: k.rotary_embedding(q, kk, cos, sin)),
    ]:
        print(f"  {name:14s} {bench(f) - base:.2f} us over the call")
