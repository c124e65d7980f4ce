"""Each of a step's 121 int8 linear calls timed alone (weights in 2 MB pages), per shape."""
import time, statistics, collections
import torch
from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.huge_pages import HugePageArena
k = load_cpu_kernels()
arena = HugePageArena()
H, INTER, KV, L, V = 576, 1536, 192, 30, 49152
SHAPES = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L + [(V, H)]
ws = []
for s in SHAPES:
    q = torch.randint(-127, 128, s, dtype=torch.int8)
    ws.append((arena.copy(k.vnni_pack_weight(q)), torch.rand(s[0]).bfloat16() / 64, s))
x = {K: torch.randn(1, K).bfloat16() for K in (H, INTER)}
noop = torch.zeros(2, 16)
per = collections.defaultdict(list)
tot = []
for rep in range(30):
    s0 = time.perf_counter()
    for w, sc, s in ws:
        t = time.perf_counter()
        k.vnni_int8_linear(x[s[1]], w, sc)
        per[s].append(time.perf_counter() - t)
    tot.append(time.perf_counter() - s0)
# python+dispatch overhead of a tiny call
tiny = (arena.copy(k.vnni_pack_weight(torch.ones(16, 64, dtype=torch.int8))), torch.ones(16).bfloat16())
xt = torch.randn(1, 64).bfloat16()
ov = []
for _ in range(2000):
    t = time.perf_counter(); k.vnni_int8_linear(xt, *tiny); ov.append(time.perf_counter() - t)
big = torch.ones(128 * 1024 * 1024)
bw = []
for _ in range(10):
    t = time.perf_counter(); big.sum(); bw.append(time.perf_counter() - t)
bwv = big.numel() * 4 / statistics.median(bw) / 1e9
print(f"sum bandwidth {bwv:.1f} GB/s; tiny call {statistics.median(ov)*1e6:.1f} us; whole sequence {statistics.median(tot)*1e3:.2f} ms")
for s, v in per.items():
    med = statistics.median(v)
    n = s[0] * s[1]
    print(f"{s}: {med*1e6:7.1f} us  {n/1e3:6.0f} KB  {n/med/1e9:5.1f} GB/s  floor {n/bwv/1e3:6.1f} us  excess {med*1e6 - n/bwv/1e3:5.1f} us")
