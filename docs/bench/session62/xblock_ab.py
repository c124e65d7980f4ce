import os, sys, time, statistics, torch
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
h, inter, kv, layers = 576, 1536, 192, 30
shapes = {"qkv": (h + 2 * kv, h), "o": (h, h), "gate_up": (2 * inter, h), "down": (h, inter)}
g = torch.Generator().manual_seed(0)
packed = {n: [(k.dpbf16_pack_gated if n == "gate_up" else k.dpbf16_pack_weight)((torch.randn(a, b, generator=g) * 0.02).bfloat16()) for _ in range(layers)] for n, (a, b) in shapes.items()}
rows = [int(r) for r in sys.argv[1].split(",")]
variants = sys.argv[2].split(",")
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 5
def call(n, x, w):
    return k.dpbf16_gated_linear(x, w, None, True, None) if n == "gate_up" else k.dpbf16_linear(x, w, None, None)
for m in rows:
    xs = {kk: torch.randn(m, kk, generator=g).bfloat16() for kk in (h, inter)}
    res = {(v, n): [] for v in variants for n in shapes}
    outs = {}
    for _ in range(rounds):
        for v in variants:
            os.environ["ROSEINFER_XBLOCK"] = v
            for n in shapes:
                t = time.perf_counter()
                for w in packed[n]: y = call(n, xs[shapes[n][1]], w)
                res[(v, n)].append(time.perf_counter() - t)
                outs[(v, n)] = y
    for v in variants:
        same = all(torch.equal(outs[(v, n)], outs[(variants[0], n)]) for n in shapes)
        med = {n: statistics.median(res[(v, n)]) for n in shapes}
        print(f"rows {m:4d} block {v:>8}: " + "  ".join(f"{n} {t*1e3:6.1f}" for n, t in med.items()) + f"  all {sum(med.values())*1e3:7.1f} ms {'same' if same else 'DIFFERENT'}", flush=True)
