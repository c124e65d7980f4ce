"""One layer's decode attention per call, after a weight-sized read ("cold") or repeated on one
layer's cache ("warm"): 30 layers of SmolLM2-135M's shape, one batch of `batch` sequences of
`context` keys scattered over the cache, NT threads (default 2).

    NT=1 .venv/bin/python docs/bench/session21/cold_attn.py 1 2000 int8
"""

import os
import statistics
import sys
import time

import torch

from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.kv_cache import quantize_rows

LAYERS, HEADS, KV_HEADS, HEAD_DIM, BLOCK = 30, 9, 3, 64, 16
kernels = load_cpu_kernels()
torch.set_num_threads(int(os.environ.get("NT", "2")))
b, n, int8 = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] == "int8"
torch.manual_seed(0)
per_seq = -(-n // BLOCK)
num_blocks = 4 * b * per_seq
caches = []
for _ in range(LAYERS):
    kv = torch.randn(2, num_blocks, KV_HEADS, BLOCK, HEAD_DIM, dtype=torch.bfloat16)
    caches.append(quantize_rows(kv) if int8 else (kv, None))
q = torch.randn(b, HEADS, HEAD_DIM, dtype=torch.bfloat16)
k, v = (torch.randn(b, KV_HEADS, HEAD_DIM, dtype=torch.bfloat16) for _ in range(2))
lens = torch.full((b,), n, dtype=torch.long)
tables = torch.randperm(num_blocks)[: b * per_seq].view(b, per_seq)
last = lens - 1
slots = tables[torch.arange(b), last // BLOCK] * BLOCK + last % BLOCK
evict = torch.ones(40 << 20)  # 160 MB
chunk = 3_500_000 // 4  # a layer's int8 weights
results: dict[str, list[float]] = {"cold": [], "warm": []}
for rnd in range(5):
    for mode in ("cold", "warm"):
        times = []
        for layer in range(LAYERS):
            (kc, vc), scales = caches[layer if mode == "cold" else 0]
            ks, vs = (None, None) if scales is None else scales
            if mode == "cold":
                at = (rnd * LAYERS + layer) * chunk % (evict.numel() - chunk)
                evict[at : at + chunk].sum()
            start = time.perf_counter()
            kernels.paged_decode_attention(
                q, k, v, kc, vc, slots, tables, lens, HEAD_DIM**-0.5, k_scale=ks, v_scale=vs
            )
            times.append(time.perf_counter() - start)
        results[mode].append(statistics.median(times))
for mode, times in results.items():
    print(
        f"batch {b} ctx {n} {'int8' if int8 else 'bf16'} {mode}: per layer median-of-rounds "
        f"{statistics.median(times) * 1e6:.1f} us (min {min(times) * 1e6:.1f})"
    )
