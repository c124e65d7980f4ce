import sys, os, time, statistics, torch
sys.path.insert(0, "/work/main/benchmarks")
from prefill_attention import block_tables
from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.kv_cache import LayerCache
import roseinfer; print(roseinfer.__file__)
k = load_cpu_kernels()
kvd = sys.argv[2] if len(sys.argv)>2 else "bf16"
torch.manual_seed(0)
BLOCK=16
tabs = block_tables(1, 2000, 2000, False)
nb = int(tabs.max())+1
def cache():
    if kvd == "bf16":
        return LayerCache(torch.randn(nb,3,BLOCK,64).bfloat16(), torch.randn(nb,3,BLOCK,64).bfloat16())
    return LayerCache(torch.randint(-127,127,(nb,3,BLOCK,64),dtype=torch.int8), torch.randint(-127,127,(nb,3,BLOCK,64),dtype=torch.int8),
        torch.rand(nb,3,BLOCK)*0.02, torch.rand(nb,3,BLOCK)*0.02)
caches = [cache() for _ in range(30)]
qs = [torch.randn(500, 9, 64).bfloat16() for _ in range(4)]
SH = os.environ.get("SHAPE")
if SH:
    S, rest = SH.split("x"); Q, C = rest.split("@"); S, Q, C = int(S), int(Q), int(C)
    tabs = block_tables(S, Q, C, False); nb = int(tabs.max())+1
    caches = [cache() for _ in range(30)]
    qq = torch.randn(S*Q, 9, 64).bfloat16()
    def run():
        qsl = torch.arange(S+1)*Q; ctx = torch.full((S,), C)
        if kvd == "bf16":
            return [k.paged_prefill_attention(qq, c.k, c.v, tabs, qsl, ctx, 0.125, tile="auto") for c in caches]
        return [k.paged_prefill_attention(qq, c.k, c.v, tabs, qsl, ctx, 0.125, c.k_scale, c.v_scale, tile="auto") for c in caches]
def run_chunks():
    outs=[]
    for i in range(4):
        qsl = torch.tensor([0, 500]); ctx = torch.tensor([500*(i+1)])
        for c in caches:
            if kvd == "bf16":
                outs.append(k.paged_prefill_attention(qs[i], c.k, c.v, tabs, qsl, ctx, 0.125, tile="auto"))
            else:
                outs.append(k.paged_prefill_attention(qs[i], c.k, c.v, tabs, qsl, ctx, 0.125, c.k_scale, c.v_scale, tile="auto"))
    return outs
if not SH: run = run_chunks
def setter(hm, qt, kt):
    def f():
        os.environ.pop("HM", None)
        if hm: os.environ["HM"] = str(hm)
        os.environ["QT"] = str(qt); os.environ["KT"] = str(kt)
    return f
import json
modes = {m: setter(*v) for m, v in json.loads(os.environ.get("MODES", '{"A": [0,32,64], "B": [1,32,64]}')).items()}
ref = None
ts = {m: [] for m in modes}
for r in range(int(sys.argv[1])):
    for m, f in modes.items():
        f(); t=time.perf_counter(); o = run(); ts[m].append(time.perf_counter()-t)
        if ref is None: ref = o
        elif r == 0: print(m, "identical", all(torch.equal(a,b) for a,b in zip(ref,o)))
for m in modes: print(m, "median ms %.1f" % (1e3*statistics.median(ts[m][1:])), "quartiles", ["%.1f" % (1e3*x) for x in statistics.quantiles(ts[m][1:], n=4)])
for m in modes: print(m, "/A per round median %.3f" % statistics.median(b/a for a,b in zip(ts["A"][1:], ts[m][1:])))
