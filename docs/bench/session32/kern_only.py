"""The prefill kernel alone, the pairs tile, SmolLM2's 30 layers: PYTHONPATH=. .venv/bin/python
docs/bench/session32/kern_only.py SHAPE REPS [bf16|int8] [q scale]; ms and GFLOP/s."""
import sys, time, statistics, torch
sys.path.insert(0, "benchmarks")
from prefill_attention import block_tables, LAYERS, HEADS, KV_HEADS, HEAD_DIM, BLOCK
from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.kv_cache import LayerCache
kern = load_cpu_kernels()
shape = sys.argv[1] if len(sys.argv) > 1 else "1x2000@2000"
reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
cache_dtype = sys.argv[3] if len(sys.argv) > 3 else "bf16"
s, rest = shape.split("x"); qn, c = rest.split("@"); s, qn, c = int(s), int(qn), int(c)
torch.manual_seed(0)
table = block_tables(s, qn, c, False); nb = int(table.max()) + 1
def cache():
    if cache_dtype == "int8":
        k = torch.randint(-127, 128, (nb, KV_HEADS, BLOCK, HEAD_DIM), dtype=torch.int8)
        return (k, k.clone(), torch.rand(nb, KV_HEADS, BLOCK) / 64, torch.rand(nb, KV_HEADS, BLOCK) / 64)
    return (torch.randn(nb, KV_HEADS, BLOCK, HEAD_DIM).bfloat16(), torch.randn(nb, KV_HEADS, BLOCK, HEAD_DIM).bfloat16(), None, None)
caches = [cache() for _ in range(LAYERS)]
q = (torch.randn(s * qn, HEADS, HEAD_DIM) * float(sys.argv[4] if len(sys.argv) > 4 else 1)).bfloat16()
qsl = torch.arange(s + 1) * qn; ctx = torch.full((s,), c)
times = []
for r in range(reps + 1):
    t = time.perf_counter()
    for k, v, ks, vs in caches:
        kern.paged_prefill_attention(q, k, v, table, qsl, ctx, HEAD_DIM ** -0.5, ks, vs, tile="pairs")
    if r: times.append(time.perf_counter() - t)
ms = statistics.median(times) * 1e3
flop = 0
for i in range(qn): flop += (c - qn + i + 1)
flop *= s * HEADS * LAYERS * HEAD_DIM * 2 * 2
print(f"{shape} {cache_dtype}: {ms:.1f} ms, {flop / ms / 1e6:.1f} GFLOP/s")
