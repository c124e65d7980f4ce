"""argmax_rows (greedy sampling's kernel) over SmolLM2's 49,152 logits: median of 200 calls at 1
and 48 rows, fp32 and bf16, with the kernels of the tree on PYTHONPATH. Session 19.

    PYTHONPATH=. .venv/bin/python docs/bench/session19/argmax_rows.py
"""

import statistics
import time

import torch

from roseinfer.kernels import load_cpu_kernels

kernels = load_cpu_kernels()
assert kernels is not None
for dtype in (torch.float32, torch.bfloat16):
    for rows in (1, 48):
        logits = torch.randn(rows, 49152).to(dtype)
        times = []
        for _ in range(200):
            start = time.perf_counter()
            kernels.argmax_rows(logits)
            times.append(time.perf_counter() - start)
        print(f"{str(dtype):>15} rows {rows:2d}: {statistics.median(times) * 1e6:7.1f} µs")
