import time, statistics, sys, torch
from roseinfer.kernels import load_cpu_kernels as load
k = load()
torch.manual_seed(0)
M = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
K, I, L = 576, 1536, 30
x = torch.randn(M, K).bfloat16()
wb = [k.amx_pack_gated((torch.randn(2 * I, K) * 0.05).bfloat16()) for _ in range(L)]
wq = [k.amx_pack_gated(torch.randint(-127, 128, (2 * I, K), dtype=torch.int8)) for _ in range(L)]
sc = torch.full((2 * I,), 0.001).bfloat16()
def run_b():
    for w in wb: k.amx_gated_linear(x, w, None, None, True, None)
def run_q():
    for w in wq: k.amx_gated_linear(x, w, sc, None, True, None)
def run_qs():  # int8 without scale? not allowed; plain linear no silu
    for w in wq: k.amx_gated_linear(x, w, sc, None, False, None)
def run_bs():
    for w in wb: k.amx_gated_linear(x, w, None, None, False, None)
fs = dict(bf16=run_b, int8=run_q, bf16_nosilu=run_bs, int8_nosilu=run_qs)
t = {n: [] for n in fs}
for r in range(12):
    for n, f in fs.items():
        s = time.perf_counter(); f(); t[n].append(time.perf_counter() - s)
for n, v in t.items():
    v = sorted(v[2:]); print(f"{n}: {1e3*statistics.median(v):.1f} ms (q {1e3*v[len(v)//4]:.1f}-{1e3*v[3*len(v)//4]:.1f})")
