"""The C++ prefill attention alone, as SmolLM2-135M's 30 layers run it: one sequence of Q new
tokens at 2,000 in all (C - Q cached), bf16 cache, the tile named (default amx); the median and
minimum of REPS runs after a warm-up. For A/B of builds: run it from two checkouts in turns
(PYTHONPATH=<checkout>), each building its own kernels.

    .venv/bin/python docs/bench/session67/attn_only.py 2000 5 amx
"""

import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from prefill_attention import BLOCK, HEAD_DIM, HEADS, KV_HEADS, LAYERS, block_tables  # noqa: E402

from roseinfer.kernels import load_cpu_kernels  # noqa: E402
from roseinfer.layers.kv_cache import LayerCache  # noqa: E402

queries = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 10
tile = sys.argv[3] if len(sys.argv) > 3 else "amx"
context = 2000
kernels = load_cpu_kernels()
assert kernels is not None, "the C++ kernels do not build here"
torch.manual_seed(0)
table = block_tables(1, queries, context, False)
blocks = int(table.max()) + 1
caches = [
    LayerCache(torch.randn(blocks, KV_HEADS, BLOCK, HEAD_DIM).bfloat16(),
               torch.randn(blocks, KV_HEADS, BLOCK, HEAD_DIM).bfloat16())
    for _ in range(LAYERS)
]  # fmt: skip
q = torch.randn(queries, HEADS, HEAD_DIM).bfloat16()
qsl = torch.tensor([0, queries])
ctx = torch.tensor([context])


def run() -> None:
    for c in caches:
        kernels.paged_prefill_attention(q, c.k, c.v, table, qsl, ctx, HEAD_DIM**-0.5, tile=tile)


run()
times = []
for _ in range(reps):
    start = time.perf_counter()
    run()
    times.append(time.perf_counter() - start)
times.sort()
print(f"{queries}@{context} {tile}: median {1e3 * times[len(times) // 2]:.1f} ms "
      f"min {1e3 * times[0]:.1f}")  # fmt: skip
