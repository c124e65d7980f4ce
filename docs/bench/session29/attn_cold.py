"""Where a cold one-row decode-attention call's time goes: warm; only its K/V cold (fresh
blocks each call, nothing else streamed); everything cold (a 128 MB sum before each call); its
code cold but its K/V warm (the sum, then the call's blocks read by torch)."""
import sys, time, statistics, torch
from roseinfer.kernels import load_cpu_kernels
from roseinfer.layers.kv_cache import quantize_rows
k = load_cpu_kernels()
N, BLOCK, D = int(sys.argv[1]), 16, 64
int8 = sys.argv[2] == "int8"
per = -(-N // BLOCK); sets = 1000; nb = per * sets
kv = torch.randn(2, nb, 3, BLOCK, D, dtype=torch.bfloat16)
(kc, vc), sc = quantize_rows(kv) if int8 else ((kv[0], kv[1]), None)
ks, vs = (None, None) if sc is None else sc
q = torch.randn(1, 9, D, dtype=torch.bfloat16); kk = torch.randn(1, 3, D, dtype=torch.bfloat16); v = torch.randn(1, 3, D, dtype=torch.bfloat16)
lens = torch.full((1,), N)
tables = [torch.arange(per).view(1, per) + i * per for i in range(sets)]
slots = [t[:, (N - 1) // BLOCK] * BLOCK + (N - 1) % BLOCK for t in tables]
big = torch.ones(int(float(sys.argv[3]) * 1024 * 1024 // 4)) if len(sys.argv) > 3 else torch.ones(32 * 1024 * 1024)
def call(i):
    k.paged_decode_attention(q, kk, v, kc, vc, slots[i], tables[i], lens, D**-0.5, k_scale=ks, v_scale=vs)
def touch(i):
    a, b = i * per, (i + 1) * per
    kc[a:b].sum(); vc[a:b].sum()
    if ks is not None: ks[a:b].sum(); vs[a:b].sum()
for _ in range(2):
    for mode in ["warm", "data cold", "all cold", "code cold"]:
        ts = []
        for j in range(300):
            i = 0 if mode == "warm" else j % sets
            if mode in ("all cold", "code cold"): big.sum()
            if mode == "code cold": touch(i)
            s = time.perf_counter(); call(i); ts.append(time.perf_counter() - s)
        print(f"{mode:10} {statistics.median(ts)*1e6:6.1f} us", end="   ")
    print()
