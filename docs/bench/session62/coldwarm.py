import time, torch, sys, statistics
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
torch.set_num_threads(int(sys.argv[1]))
M,N,K = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
ws = [k.dpbf16_pack_weight((torch.randn(N, K)*0.02).bfloat16()) for _ in range(30)]
x = torch.randn(M, K).bfloat16(); out = torch.empty(M, N, dtype=torch.bfloat16)
res = {"warm": [], "cold": []}
for _ in range(5):
    for mode in res:
        t = time.perf_counter()
        for w in (ws if mode == "cold" else [ws[0]] * 30): k.dpbf16_linear(x, w, None, out)
        res[mode].append((time.perf_counter() - t) / 30)
for mode, ts in res.items():
    t = statistics.median(ts); print(f"{mode}: {t*1e6:.1f} us {2*M*N*K/t/1e9:.1f} GF/s")
