"""The 121 int8 calls of a step at R rows: weights packed tile by tile (shipped, mode 0) against
each task's 3 tiles interleaved (mode 1) with the prefetch distance x1, x2, x3; all in 2 MB pages,
in turns, with a sum of 512 MB each round for the moment's bandwidth."""
import time, statistics, collections, sys
import torch
from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.huge_pages import HugePageArena
k = load_cpu_kernels()
arena = HugePageArena()
H, INTER, KV, L, V = 576, 1536, 192, 30, 49152
SHAPES = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L + [(V, H)]
old, new, blk = [], [], []
for s in SHAPES:
    q = torch.randint(-127, 128, s, dtype=torch.int8)
    sc = torch.rand(s[0]).bfloat16() / 64
    old.append((arena.copy(k.vnni_pack_weight(q)), sc, s))
    new.append((arena.copy(k.vnni_pack_weight_tasks(q)), sc, s))
    blk.append((arena.copy(k.vnni_pack_weight_blocks(q)), sc, s))
rows = int(sys.argv[1]); rounds = int(sys.argv[2])
x = {K: torch.randn(rows, K).bfloat16() for K in (H, INTER)}
for (wo, sc, s), (wn, _, _), (wb, _, _) in zip(old[:4], new[:4], blk[:4]):
    outs = []
    for mode, w in ((0, wo), (1, wn), (2, wb)):
        k.set_ab_mode(mode); outs.append(k.vnni_int8_linear(x[s[1]], w, sc))
    assert torch.equal(outs[0], outs[1]) and torch.equal(outs[0], outs[2]), s
import os
CONFIGS = [tuple(int(v) for v in c.split(':')) for c in os.environ.get('CONFIGS', '0:1,1:1,2:1,2:2,2:4').split(',')]
big = torch.ones(128 * 1024 * 1024)
times = collections.defaultdict(list)
for i in range(rounds):
    t = time.perf_counter(); big.sum(); times["sum"].append(time.perf_counter() - t)
    for mode, mult in (CONFIGS if i % 2 else CONFIGS[::-1]):
        k.set_ab_mode(mode); k.set_pf_mult(mult)
        ws = [old, new, blk, new][mode]
        t = time.perf_counter()
        for w, sc, s in ws: k.vnni_int8_linear(x[s[1]], w, sc)
        times[(mode, mult)].append(time.perf_counter() - t)
k.set_ab_mode(0); k.set_pf_mult(1)
nbytes = sum(a * b for a, b in SHAPES)
bw = big.numel() * 4 / statistics.median(times["sum"]) / 1e9
base = statistics.median(times[CONFIGS[0]])
print(f"rows {rows}: sum {bw:.1f} GB/s (floor {nbytes / bw / 1e6:.2f} ms); " + ", ".join(
    f"{['tiles', 'tasks', 'blocks', 'tasks-far'][m]} x{p} {statistics.median(times[(m, p)])*1e3:.2f} ms ({(statistics.median(times[(m, p)])/base-1)*100:+.1f} %)" for m, p in CONFIGS))
