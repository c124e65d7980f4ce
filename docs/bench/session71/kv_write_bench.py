"""`write_kv_cache` for a 2,000-token prompt's keys and values (3 KV heads of 64, blocks of 16,
scattered), 30 layers, into int8 caches (quantized) and bf16 ones, in turns: the median of 10
rounds after 2.

    .venv/bin/python docs/bench/session71/kv_write_bench.py
"""

import statistics
import time

import torch

from roseinfer.kernels import load_cpu_kernels

k = load_cpu_kernels()
torch.manual_seed(0)
n, kv_heads, D, BS, layers = 2000, 3, 64, 16, 30
blocks = n // BS + 8
keys = [torch.randn(n, kv_heads, D).bfloat16() for _ in range(layers)]
values = [torch.randn(n, kv_heads, D).bfloat16() for _ in range(layers)]
slots = torch.randperm(blocks * BS)[:n].sort().values
shape = (blocks, kv_heads, BS, D)
int8_caches = [
    (
        torch.zeros(shape, dtype=torch.int8),
        torch.zeros(shape, dtype=torch.int8),
        torch.zeros(shape[:3]),
        torch.zeros(shape[:3]),
    )
    for _ in range(layers)
]
bf16_caches = [
    (torch.zeros(shape).bfloat16(), torch.zeros(shape).bfloat16()) for _ in range(layers)
]


def int8() -> None:
    for i, (kc, vc, ks, vs) in enumerate(int8_caches):
        k.write_kv_cache(keys[i], values[i], kc, vc, slots, ks, vs)


def bf16() -> None:
    for i, (kc, vc) in enumerate(bf16_caches):
        k.write_kv_cache(keys[i], values[i], kc, vc, slots, None, None)


times: dict[str, list[float]] = {"int8": [], "bf16": []}
for _ in range(12):
    for name, f in (("int8", int8), ("bf16", bf16)):
        s = time.perf_counter()
        f()
        times[name].append(time.perf_counter() - s)
for name, v in times.items():
    print(f"{name}: {1e3 * statistics.median(sorted(v[2:])):.2f} ms (30 layers)")
