import time, statistics, sys, torch
from roseinfer.kernels import load_cpu_kernels as load
k = load()
torch.manual_seed(0)
M = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
L = 30
shapes = dict(qkv=(960, 576), o=(576, 576), down=(576, 1536))
fs = {}
for name, (N, K) in shapes.items():
    x = torch.randn(M, K).bfloat16()
    w = [(torch.randn(N, K) * 0.05).bfloat16() for _ in range(L)]
    ob = [torch.ops.mkldnn._reorder_linear_weight(t, 32) for t in w]
    ab = [k.amx_pack_weight(t) for t in w]
    aq = [k.amx_pack_weight(torch.randint(-127, 128, (N, K), dtype=torch.int8)) for _ in range(L)]
    sc = torch.full((N,), 0.001).bfloat16()
    fs[name + "_onednn"] = (lambda x=x, ob=ob: [torch.ops.mkldnn._linear_pointwise(x, t, None, "none", [], "") for t in ob])
    fs[name + "_amxbf16"] = (lambda x=x, ab=ab: [k.amx_linear(x, t, None, None) for t in ab])
    fs[name + "_amxint8"] = (lambda x=x, aq=aq, sc=sc: [k.amx_int8_linear(x, t, sc, None, None) for t in aq])
t = {n: [] for n in fs}
for r in range(10):
    for n, f in fs.items():
        s = time.perf_counter(); f(); t[n].append(time.perf_counter() - s)
for n, v in t.items():
    v = sorted(v[2:]); print(f"{n}: {1e3*statistics.median(v):.1f} ms (q {1e3*v[len(v)//4]:.1f}-{1e3*v[3*len(v)//4]:.1f})")
