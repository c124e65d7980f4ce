import time, statistics, torch
from roseinfer.layers.kv_cache import LayerCache
torch.manual_seed(0)
nb, KVH, BS, D, N = 400, 3, 16, 64, 512
for kind in ("bf16", "int8"):
    if kind == "bf16":
        c = LayerCache(torch.zeros(nb, KVH, BS, D).bfloat16(), torch.zeros(nb, KVH, BS, D).bfloat16())
    else:
        c = LayerCache(torch.zeros(nb, KVH, BS, D, dtype=torch.int8), torch.zeros(nb, KVH, BS, D, dtype=torch.int8), torch.zeros(nb, KVH, BS), torch.zeros(nb, KVH, BS))
    slots = torch.arange(N) + 160
    blocks, offsets = slots // BS, slots % BS
    k = torch.randn(N, KVH, D).bfloat16(); v = torch.randn(N, KVH, D).bfloat16()
    ts = []
    for _ in range(50):
        t = time.perf_counter(); c.write(blocks, offsets, k, v); ts.append(time.perf_counter() - t)
    print(kind, "write of 512 tokens: %.3f ms" % (1e3 * statistics.median(ts)))
from roseinfer.kernels import load_cpu_kernels
kk = load_cpu_kernels()
for kind in ("bf16", "int8"):
    if kind == "bf16":
        c = LayerCache(torch.zeros(nb, KVH, BS, D).bfloat16(), torch.zeros(nb, KVH, BS, D).bfloat16())
    else:
        c = LayerCache(torch.zeros(nb, KVH, BS, D, dtype=torch.int8), torch.zeros(nb, KVH, BS, D, dtype=torch.int8), torch.zeros(nb, KVH, BS), torch.zeros(nb, KVH, BS))
    slots = torch.arange(N) + 160
    k = torch.randn(N, KVH, D).bfloat16(); v = torch.randn(N, KVH, D).bfloat16()
    ts = []
    for _ in range(50):
        t = time.perf_counter(); kk.write_kv_cache(k, v, c.k, c.v, slots, c.k_scale, c.v_scale); ts.append(time.perf_counter() - t)
    print(kind, "write_kv_cache of 512 tokens: %.3f ms" % (1e3 * statistics.median(ts)))
