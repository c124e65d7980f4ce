"""Prefill-kernel modes (modes_ab.patch's set_ab_mode) timed in turns in one process:
modes_ab.py MODES SHAPES REPS [TILE]; env DT (bfloat16|float32), CACHES (bf16,int8)."""
import sys, time, statistics, torch
sys.path.insert(0, "/work/main/benchmarks")  # its helpers; roseinfer from PYTHONPATH: the tree timed
from prefill_attention import block_tables, LAYERS, HEADS, KV_HEADS, HEAD_DIM, BLOCK
from roseinfer.kernels import load_cpu_kernels
kern = load_cpu_kernels()
modes = [int(m) for m in sys.argv[1].split(",")]
shapes = sys.argv[2].split(",")
reps = int(sys.argv[3])
tile = sys.argv[4] if len(sys.argv) > 4 else "pairs"
import os
DT = getattr(torch, os.environ.get("DT", "bfloat16"))
for cache_dtype in os.environ.get("CACHES", "bf16,int8").split(","):
  for shape in shapes:
    s, rest = shape.split("x"); qn, c = rest.split("@"); s, qn, c = int(s), int(qn), int(c)
    torch.manual_seed(0)
    table = block_tables(s, qn, c, False); nb = int(table.max()) + 1
    def cache():
        if cache_dtype == "int8":
            k = torch.randint(-127, 128, (nb, KV_HEADS, BLOCK, HEAD_DIM), dtype=torch.int8)
            return (k, torch.randint(-127, 128, (nb, KV_HEADS, BLOCK, HEAD_DIM), dtype=torch.int8), torch.rand(nb, KV_HEADS, BLOCK) / 16, torch.rand(nb, KV_HEADS, BLOCK) / 64)
        return (torch.randn(nb, KV_HEADS, BLOCK, HEAD_DIM).to(DT), torch.randn(nb, KV_HEADS, BLOCK, HEAD_DIM).to(DT), None, None)
    caches = [cache() for _ in range(LAYERS)]
    q = (torch.randn(s * qn, HEADS, HEAD_DIM) * 2).to(DT)
    qsl = torch.arange(s + 1) * qn; ctx = torch.full((s,), c)
    outs = {}
    times = {m: [] for m in modes}
    for r in range(reps + 1):
        for m in modes:
            kern.set_ab_mode(m)
            t = time.perf_counter()
            for k, v, ks, vs in caches:
                o = kern.paged_prefill_attention(q, k, v, table, qsl, ctx, HEAD_DIM ** -0.5, ks, vs, tile=tile)
            if r: times[m].append(time.perf_counter() - t)
            else: outs[m] = o
    base = outs[modes[0]].float()
    desc = []
    for m in modes:
        d = (outs[m].float() - base).abs().max().item()
        desc.append(f"mode {m} {statistics.median(times[m])*1e3:.1f} ms (maxdiff {d:.2e})")
    print(f"{shape} {cache_dtype} {tile}: " + ", ".join(desc), flush=True)
