"""Session 38: is batch-32 decode attention over the int8 cache bound by its K/V's trip from DRAM?
Times `paged_decode_attention` per layer over 30 layers' caches in turn (each layer's K/V cold, as
in a step: the other layers' K/V and the weights pass between) against the same layer with its
K/V read just before by the same call (in L2 and L3).
    PYTHONPATH=. .venv/bin/python docs/bench/session38/attn_cold_warm.py [int8|bf16] [BATCH] [CTX] [huge]"""
import sys, time, statistics
import torch
from roseinfer.kernels import load_cpu_kernels

ext = load_cpu_kernels()
dtype = sys.argv[1] if len(sys.argv) > 1 else "int8"
B = int(sys.argv[2]) if len(sys.argv) > 2 else 32
ctx = int(sys.argv[3]) if len(sys.argv) > 3 else 200
L, H, KVH, D, bs = 30, 9, 3, 64, 16
blocks_per = -(-(ctx + 1) // bs)
nblocks = B * blocks_per
torch.manual_seed(0)
perm = torch.arange(nblocks)  # admitted together: each sequence's blocks in order
tables = perm.view(B, blocks_per).contiguous()
lens = torch.full((B,), ctx + 1, dtype=torch.int64)
slots = tables[:, ctx // bs] * bs + ctx % bs
cd = torch.int8 if dtype == "int8" else torch.bfloat16
huge = len(sys.argv) > 4 and sys.argv[4] == "huge"
def place(t):  # the cache in 2 MB pages (written at allocation) where asked
    if not huge:
        return t
    from roseinfer.layers.huge_pages import huge_page_zeros
    h = huge_page_zeros(tuple(t.shape), t.dtype)
    h.copy_(t)
    return h
caches = []
for _ in range(L):
    if cd == torch.int8:
        kc = torch.randint(-127, 127, (nblocks, KVH, bs, D), dtype=torch.int8)
        vc = torch.randint(-127, 127, (nblocks, KVH, bs, D), dtype=torch.int8)
        ks = torch.rand(nblocks, KVH, bs) * 0.01
        vs = torch.rand(nblocks, KVH, bs) * 0.01
    else:
        kc = torch.randn(nblocks, KVH, bs, D).bfloat16()
        vc = torch.randn(nblocks, KVH, bs, D).bfloat16()
        ks = vs = None
    caches.append(tuple(None if t is None else place(t) for t in (kc, vc, ks, vs)))
q = torch.randn(B, H, D).bfloat16()
k = torch.randn(B, KVH, D).bfloat16()
v = torch.randn(B, KVH, D).bfloat16()
out = torch.empty(B, H, D, dtype=torch.bfloat16)
def attend(l):
    kc, vc, ks, vs = caches[l]
    ext.paged_decode_attention(q, k, v, kc, vc, slots, tables, lens, 0.125, ks, vs, out)
kv_mb = sum(t.numel() * t.element_size() for t in caches[0] if t is not None) / 1e6
for rep in range(3):
    cold, warm = [], []
    for it in range(20):
        for l in range(L):
            s = time.perf_counter(); attend(l); cold.append(time.perf_counter() - s)
        for l in range(L):
            attend(l)  # its K/V now in L2 and L3
            s = time.perf_counter(); attend(l); warm.append(time.perf_counter() - s)
    c, w = statistics.median(cold), statistics.median(warm)
    print(f"{dtype}{' huge' if huge else ''} B={B} ctx={ctx} ({kv_mb:.2f} MB K/V a layer): cold {1e3*c:.3f} ms, "
          f"warm {1e3*w:.3f} ms a layer; 30 layers {30e3*c:.2f} vs {30e3*w:.2f} ms", flush=True)
