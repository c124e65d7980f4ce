import sys, time, torch
from roseinfer.kernels import load_cpu_kernels
H, INTER, KV, L = 576, 1536, 192, 30
k = load_cpu_kernels()
torch.manual_seed(0)
shapes = [(H + 2 * KV, H), (H, H), (2 * INTER, H), (H, INTER)] * L
def med(fn, runs=9):
    fn(); t=[]
    for _ in range(runs):
        s=time.perf_counter(); fn(); t.append(time.perf_counter()-s)
    return sorted(t)[runs//2]*1000
with torch.inference_mode():
    W = [torch.randn(n, kk).bfloat16() * 0.02 for n, kk in shapes]
    dp = [k.dpbf16_pack_weight(w) for w in W]
    sc = [(w.float().abs().amax(1) / 127).clamp(min=1e-8) for w in W]
    Q = [torch.round(w.float() / s[:, None]).clamp(-127, 127).to(torch.int8) for w, s in zip(W, sc)]
    sc = [s.bfloat16() for s in sc]
    VN = [k.vnni_pack_weight(q) for q in Q]
    for rows in [int(r) for r in sys.argv[1].split(",")]:
        xs = {kk: torch.randn(rows, kk).bfloat16() for kk in (H, INTER)}
        V = {
          "dpbf16": lambda x,i: k.dpbf16_linear(x, dp[i]),
          "small_batch": lambda x,i: k.small_batch_linear(x, W[i]),
          "int8_linear": lambda x,i: k.int8_linear(x, Q[i], sc[i]),
          "vnni_int8": lambda x,i: k.vnni_int8_linear(x, VN[i], sc[i]),
        }
        if rows > 32: V.pop("small_batch"); V.pop("int8_linear")
        R = {n: [] for n in V}
        for _ in range(2):
            for n, f in V.items():
                R[n].append(med(lambda f=f: [f(xs[w.shape[1]], i) for i, w in enumerate(W)]))
        print(rows, "rows:", ", ".join(f"{n} {min(v):.1f} ms" for n, v in R.items()), flush=True)
