"""One process: the prefill kernel's 30 layers per shape/case, median of reps (ms)."""
import sys, time, statistics, torch
sys.path.insert(0, "/work/main/benchmarks")  # its helpers; roseinfer from PYTHONPATH: the tree timed
from prefill_attention import block_tables, LAYERS, HEADS, KV_HEADS, HEAD_DIM, BLOCK
from roseinfer.kernels import load_cpu_kernels
kern = load_cpu_kernels()
reps = int(sys.argv[1])
out = []
for case in ["bf16", "int8", "fp32"]:
    for shape in ["1x2000@2000", "1x512@2000", "16x32@1024", "1x64@2000"]:
        s, rest = shape.split("x"); qn, c = rest.split("@"); s, qn, c = int(s), int(qn), int(c)
        torch.manual_seed(0)
        table = block_tables(s, qn, c, False); nb = int(table.max()) + 1
        dt = torch.float32 if case == "fp32" else torch.bfloat16
        def cache():
            if case == "int8":
                return (torch.randint(-127, 128, (nb, KV_HEADS, BLOCK, HEAD_DIM), dtype=torch.int8), torch.randint(-127, 128, (nb, KV_HEADS, BLOCK, HEAD_DIM), dtype=torch.int8), torch.rand(nb, KV_HEADS, BLOCK) / 16, torch.rand(nb, KV_HEADS, BLOCK) / 64)
            return (torch.randn(nb, KV_HEADS, BLOCK, HEAD_DIM).to(dt), torch.randn(nb, KV_HEADS, BLOCK, HEAD_DIM).to(dt), None, None)
        caches = [cache() for _ in range(LAYERS)]
        q = (torch.randn(s * qn, HEADS, HEAD_DIM) * 2).to(dt)
        qsl = torch.arange(s + 1) * qn; ctx = torch.full((s,), c)
        ts = []
        for r in range(reps + 1):
            t = time.perf_counter()
            for k, v, ks, vs in caches:
                kern.paged_prefill_attention(q, k, v, table, qsl, ctx, HEAD_DIM ** -0.5, ks, vs)
            if r: ts.append(time.perf_counter() - t)
        out.append(f"{case}:{shape}={statistics.median(ts)*1e3:.1f}")
print(" ".join(out), flush=True)
