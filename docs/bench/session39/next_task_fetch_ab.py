import os, sys, time, statistics, torch
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
torch.manual_seed(0)
shapes = [(960, 576), (576, 576), (3072, 576), (576, 1536)]
layers = [[k.dpbf16_pack_weight(torch.randn(n, kk).bfloat16()) for n, kk in shapes] for _ in range(30)]
macs_per_row = 30 * sum(n * kk for n, kk in shapes)
for M in [int(a) for a in sys.argv[1:]]:
    xs = {kk: torch.randn(M, kk).bfloat16() for kk in (576, 1536)}
    ref = [k.dpbf16_linear(xs[kk], w) for ws in layers[:1] for w, (n, kk) in zip(ws, shapes)]
    def sweep():
        for ws in layers:
            for w, (n, kk) in zip(ws, shapes):
                k.dpbf16_linear(xs[kk], w)
    ts = {"old": [], "fetch": []}
    for r in range(21):
        for mode in ts:
            if mode == "old": os.environ["NOFETCH"] = "1"
            else: os.environ.pop("NOFETCH", None)
            t = time.perf_counter(); sweep(); ts[mode].append(time.perf_counter() - t)
    same = all(torch.equal(a, k.dpbf16_linear(xs[kk], w)) for a, (w, (n, kk)) in zip(ref, zip(layers[0], shapes)))
    o, f = statistics.median(ts["old"][1:]), statistics.median(ts["fetch"][1:])
    ratio = statistics.median(b / a for a, b in zip(ts["old"][1:], ts["fetch"][1:]))
    print(f"M={M}: old {o*1e3:.2f} ms ({M*macs_per_row/o/1e9:.0f} GMAC/s), next-task fetch {f*1e3:.2f} ms ({M*macs_per_row/f/1e9:.0f} GMAC/s), per-round ratio {ratio:.3f}, identical {same}", flush=True)
