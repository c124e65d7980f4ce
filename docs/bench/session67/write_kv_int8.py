"""`write_kv_cache` into an int8 cache alone: a 2,000-token prompt's keys and values for
SmolLM2's 30 layers (3 KV heads of 64), scattered blocks; median of REPS after a warm-up. For A/B
of builds: run it from two checkouts in turns (PYTHONPATH=<checkout>).

    .venv/bin/python docs/bench/session67/write_kv_int8.py 20
"""

import statistics
import sys
import time

import torch

from roseinfer.kernels import load_cpu_kernels

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 20
kernels = load_cpu_kernels()
assert kernels is not None, "the C++ kernels do not build here"
torch.manual_seed(0)
tokens, heads, dim, block, layers = 2000, 3, 64, 16, 30
blocks = tokens // block + 8
caches = [
    (torch.zeros(blocks, heads, block, dim, dtype=torch.int8),
     torch.zeros(blocks, heads, block, dim, dtype=torch.int8),
     torch.zeros(blocks, heads, block), torch.zeros(blocks, heads, block))
    for _ in range(layers)
]  # fmt: skip
order = torch.randperm(blocks)[: tokens // block]
slots = (order[:, None] * block + torch.arange(block)).reshape(-1).contiguous()
k = torch.randn(tokens, heads, dim).bfloat16()
v = torch.randn(tokens, heads, dim).bfloat16()


def run() -> None:
    for kc, vc, ks, vs in caches:
        kernels.write_kv_cache(k, v, kc, vc, slots, ks, vs)


run()
times = []
for _ in range(reps):
    start = time.perf_counter()
    run()
    times.append(time.perf_counter() - start)
print(
    f"write_kv_cache int8, {tokens} tokens x 30 layers: median {1e3 * statistics.median(times):.2f} ms"
)
