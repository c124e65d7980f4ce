"""One layer's paged_decode_attention (this checkout's engine build), the same call repeated for
SECONDS (so its K/V stay in L3 when they fit: kernel_ab.py's "warm"), and the cycles per (key,
KV head) at an assumed 2.83 GHz (fma_peak.c's 90.5 GFLOP/s on one thread / 32 FLOP a cycle).
Session 18 ran it under `perf record` on one thread to find where attend_group_avx2 spends.

    OMP_NUM_THREADS=1 PYTHONPATH=. .venv/bin/python docs/bench/session18/attention_one_layer.py 48 265 3 [bfloat16]
"""

import sys, time, torch, statistics
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
b, length = int(sys.argv[1]), int(sys.argv[2]); secs = float(sys.argv[3]); dt = getattr(torch, sys.argv[4]) if len(sys.argv) > 4 else torch.float32
heads, kv_heads, dim, bs = 9, 3, 64, 16
g = torch.Generator().manual_seed(0)
per = -(-length // bs); nb = b * per + 4
kc, vc = (torch.randn(nb, kv_heads, bs, dim, generator=g).to(dt) for _ in range(2))
tables = torch.randperm(nb, generator=g)[: b * per].view(b, per)
q = torch.randn(b, heads, dim, generator=g).to(dt)
kk, v = (torch.randn(b, kv_heads, dim, generator=g).to(dt) for _ in range(2))
lens = torch.full((b,), length)
slots = tables[:, (length - 1) // bs] * bs + (length - 1) % bs
ts = []; t0 = time.time()
while time.time() - t0 < secs:
    t = time.perf_counter(); k.paged_decode_attention(q, kk, v, kc, vc, slots, tables, lens, dim**-0.5, None, None); ts.append(time.perf_counter() - t)
med = statistics.median(ts)
threads = torch.get_num_threads()
cycles = threads * 2.83e9 * med / (b * length * kv_heads)
print(f"{b}x{length} {dt}: {med * 1e3:.3f} ms/layer, {cycles:.0f} core-cycles per (key, KV head) on {threads} threads")
