"""The 121 bf16 calls of a step at R rows through dpbf16_linear: weights packed tile after tile
(mode 0) or a task's 3 tiles interleaved pair by pair (mode 1), prefetch distance x MULT (0: none);
all in 2 MB pages, in turns, a sum of 512 MB each round. Outputs checked equal first.

    CONFIGS=0:1,1:1,1:2 PYTHONPATH=. .venv/bin/python docs/bench/session27/layout_bf16.py ROWS ROUNDS
"""
import collections, os, statistics, sys, time
import torch
from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.huge_pages import HugePageArena
k = load_cpu_kernels()
arena = HugePageArena()
H, INTER, KV, L, V = 576, 1536, 192, 30, 49152
SHAPES = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L + [(V, H)]
old, new = [], []
for s in SHAPES:
    w = (torch.randn(s) * 0.02).bfloat16()
    old.append((arena.copy(k.dpbf16_pack_weight(w)), s))
    new.append((arena.copy(k.dpbf16_pack_weight_tasks(w)), s))
rows, rounds = int(sys.argv[1]), int(sys.argv[2])
x = {K: torch.randn(rows, K).bfloat16() for K in (H, INTER)}
for (wo, s), (wn, _) in zip(old[:4], new[:4]):
    k.set_ab_mode(0); a = k.dpbf16_linear(x[s[1]], wo)
    k.set_ab_mode(1); b = k.dpbf16_linear(x[s[1]], wn)
    assert torch.equal(a, b), s
CONFIGS = [tuple(int(v) for v in c.split(":")) for c in os.environ.get("CONFIGS", "0:1,1:1,1:2").split(",")]
big = torch.ones(128 * 1024 * 1024)
times = collections.defaultdict(list)
for i in range(rounds):
    t = time.perf_counter(); big.sum(); times["sum"].append(time.perf_counter() - t)
    for mode, mult in (CONFIGS if i % 2 else CONFIGS[::-1]):
        k.set_ab_mode(mode); k.set_pf_mult(mult)
        ws = new if mode else old
        t = time.perf_counter()
        for w, s in ws: k.dpbf16_linear(x[s[1]], w)
        times[(mode, mult)].append(time.perf_counter() - t)
k.set_ab_mode(0); k.set_pf_mult(1)
nbytes = 2 * sum(a * b for a, b in SHAPES)
bw = big.numel() * 4 / statistics.median(times["sum"]) / 1e9
base = statistics.median(times[CONFIGS[0]])
print(f"rows {rows}: sum {bw:.1f} GB/s (floor {nbytes / bw / 1e6:.2f} ms); " + ", ".join(
    f"{['tiles', 'tasks'][m]} x{p} {statistics.median(times[(m, p)])*1e3:.2f} ms ({(statistics.median(times[(m, p)])/base-1)*100:+.1f} %)" for m, p in CONFIGS), flush=True)
