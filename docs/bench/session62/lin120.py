import os, sys, time, statistics, torch
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
h, inter, kv, layers = 576, 1536, 192, 30
shapes = {"qkv": (h + 2 * kv, h), "o": (h, h), "gate_up": (2 * inter, h), "down": (h, inter)}
g = torch.Generator().manual_seed(0)
packed = {n: [(k.dpbf16_pack_gated if n == "gate_up" else k.dpbf16_pack_weight)((torch.randn(a, b, generator=g) * 0.02).bfloat16()) for _ in range(layers)] for n, (a, b) in shapes.items()}
for m in [int(r) for r in sys.argv[1].split(",")]:
    xs = {kk: torch.randn(m, kk, generator=g).bfloat16() for kk in (h, inter)}
    outs = {n: torch.empty(m, (a // 2 if n == "gate_up" else a), dtype=torch.bfloat16) for n, (a, b) in shapes.items()}
    res = {(v, n): [] for v in ("alloc", "out") for n in shapes}
    for _ in range(5):
        for v in ("alloc", "out"):
            for n in shapes:
                x = xs[shapes[n][1]]; o = outs[n] if v == "out" else None
                t = time.perf_counter()
                for w in packed[n]:
                    (k.dpbf16_gated_linear(x, w, None, True, o) if n == "gate_up" else k.dpbf16_linear(x, w, None, o))
                res[(v, n)].append(time.perf_counter() - t)
    for v in ("alloc", "out"):
        med = {n: statistics.median(res[(v, n)]) for n in shapes}
        flops = 2 * m * sum(a * b for a, b in shapes.values()) * layers
        tot = sum(med.values())
        print(f"rows {m:4d} {v:>5}: " + "  ".join(f"{n} {t*1e3:6.1f}" for n, t in med.items()) + f"  all {tot*1e3:7.1f} ms {flops/tot/1e9:.0f} GF/s", flush=True)
