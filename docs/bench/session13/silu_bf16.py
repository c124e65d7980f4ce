"""SiLU·mul alone in bf16 and fp16 (the C++ kernel as the engine calls it), at one row and at a
512-row prefill chunk of SmolLM2's 1,536-wide MLP. Session 13: the 8-lane bf16/fp16 path.

    .venv/bin/python docs/bench/session13/silu_bf16.py
"""

import statistics
import time

import torch

from roseinfer.kernels import load_cpu_kernels

kernels = load_cpu_kernels()
assert kernels is not None
for dtype in (torch.bfloat16, torch.float16):
    for rows in (1, 512):
        x = torch.randn(rows, 2 * 1536).to(dtype)
        reps = 2000 if rows == 1 else 50
        times = []
        for _ in range(5):
            t = time.perf_counter()
            for _ in range(reps):
                kernels.silu_and_mul(x)
            times.append((time.perf_counter() - t) / reps)
        print(f"{str(dtype)[6:]} rows {rows}: {statistics.median(times) * 1e6:.1f} us", flush=True)
