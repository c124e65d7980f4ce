import os, sys, time, statistics, torch
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
h, inter, kv, layers = 576, 1536, 192, 30
shapes = {"qkv": (h + 2 * kv, h), "o": (h, h), "gate_up": (2 * inter, h), "down": (h, inter)}
g = torch.Generator().manual_seed(0)
packed = {n: [(k.dpbf16_pack_gated if n == "gate_up" else k.dpbf16_pack_weight)((torch.randn(a, b, generator=g) * 0.02).bfloat16()) for _ in range(layers)] for n, (a, b) in shapes.items()}
rows = [int(r) for r in sys.argv[1].split(",")]
rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 7
variants = {"per-load": "0", "widened": "1"}
flops_per_row = 2 * sum(a * b for a, b in shapes.values()) * layers
for m in rows:
    xs = {kk: torch.randn(m, kk, generator=g).bfloat16() for kk in (h, inter)}
    outs_buf = {n: torch.empty(m, (a // 2 if n == "gate_up" else a), dtype=torch.bfloat16) for n, (a, b) in shapes.items()}
    res = {(v, n): [] for v in variants for n in shapes}
    outs = {}
    for _ in range(rounds):
        for v, env in variants.items():
            os.environ["ROSEINFER_WIDE"] = env
            for n in shapes:
                x, o = xs[shapes[n][1]], outs_buf[n]
                t = time.perf_counter()
                for w in packed[n]:
                    k.dpbf16_gated_linear(x, w, None, True, o) if n == "gate_up" else k.dpbf16_linear(x, w, None, o)
                res[(v, n)].append(time.perf_counter() - t)
                outs[(v, n)] = o.clone()
    for v in variants:
        same = all(torch.equal(outs[(v, n)], outs[("per-load", n)]) for n in shapes)
        med = {n: statistics.median(res[(v, n)]) for n in shapes}
        tot = sum(med.values())
        print(f"rows {m:4d} {v:>8}: " + "  ".join(f"{n} {t*1e3:6.1f}" for n, t in med.items()) + f"  all {tot*1e3:7.1f} ms ({flops_per_row*m/tot/1e9:.0f} GFLOP/s), {'bit-identical' if same else 'DIFFERENT'}", flush=True)
