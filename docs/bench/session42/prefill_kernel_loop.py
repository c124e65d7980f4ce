import sys, time, torch, os
sys.path.insert(0, "benchmarks")
from prefill_attention import block_tables, LAYERS, KV_HEADS, BLOCK, HEAD_DIM, HEADS
from roseinfer.kernels import load_cpu_kernels
K = load_cpu_kernels()
torch.manual_seed(0)
seqs, queries, context = 1, 512, 2000
table = block_tables(seqs, queries, context, False)
nb = int(table.max()) + 1
dt = torch.bfloat16
caches0 = [(torch.randn(nb, KV_HEADS, BLOCK, HEAD_DIM).to(dt), torch.randn(nb, KV_HEADS, BLOCK, HEAD_DIM).to(dt)) for _ in range(LAYERS)]
caches = caches0 if os.environ.get("ONE") is None else [caches0[0]] * LAYERS
q = torch.randn(queries, HEADS, HEAD_DIM).to(dt)
qsl = torch.tensor([0, queries]); ctx = torch.tensor([context])
import os
torch.set_num_threads(int(os.environ.get("NT", "2")))
reps = int(sys.argv[1]) if len(sys.argv) > 1 else 10
ts = []
for r in range(reps):
    t = time.perf_counter()
    for k, v in caches:
        K.paged_prefill_attention(q, k, v, table, qsl, ctx, HEAD_DIM ** -0.5, tile="auto")
    ts.append(time.perf_counter() - t)
ts.sort(); print("ms min/med", round(ts[0]*1e3, 1), round(ts[len(ts)//2]*1e3, 1))
