"""Decode attention at one sequence, 1 and 2 threads in turns (session 20): 30 layers' caches, each four
times the context's blocks, called in turn from Python (9 tensors converted per call), per layer, best of 3
medians of 20 steps. At 70 and 175 keys the 30 caches (14 and 32 MB) stay in L3; at 500 and 2,000 they
come from DRAM.

    PYTHONPATH=. .venv/bin/python docs/bench/session20/attention_one_sequence.py float32  (or bfloat16)
"""

import statistics
import sys
import time

import torch

from roseinfer.kernels import load_cpu_kernels

k_ = load_cpu_kernels()
H, KVH, D, B = 9, 3, 64, 16
dtype = getattr(torch, sys.argv[1]) if len(sys.argv) > 1 else torch.float32
for n in (70, 175, 500, 2000):
    per = -(-n // B)
    nb = 4 * per
    caches = [torch.randn(2, nb, KVH, B, D, dtype=dtype) for _ in range(30)]
    q = torch.randn(1, H, D, dtype=dtype)
    k = torch.randn(1, KVH, D, dtype=dtype)
    v = torch.randn(1, KVH, D, dtype=dtype)
    tables = torch.arange(per).view(1, per)
    lens = torch.tensor([n])
    slots = torch.tensor([n - 1])
    res = {}
    for rnd in range(3):
        for th in (1, 2):
            torch.set_num_threads(th)
            ts = []
            for _ in range(20):
                t = time.perf_counter()
                for c in caches:
                    k_.paged_decode_attention(q, k, v, c[0], c[1], slots, tables, lens, 0.125)
                ts.append(time.perf_counter() - t)
            res.setdefault(th, []).append(statistics.median(ts) / 30 * 1e6)
    noop = []
    for _ in range(20):
        t = time.perf_counter()
        for c in caches:
            k_.vector_lanes()
        noop.append(time.perf_counter() - t)
    print(
        f"{dtype} ctx {n}: 1 thread {min(res[1]):.1f} us/layer, 2 threads {min(res[2]):.1f} us/layer (python call ~{statistics.median(noop) / 30 * 1e6:.1f} us)"
    )
