import time, torch
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
torch.manual_seed(0)
M = 2000
for (N, K, name) in [(960, 576, "qkv"), (576, 576, "o"), (3072, 576, "gate_up"), (576, 1536, "down")]:
    ws = [(torch.randn(N, K) * 0.02).to(torch.bfloat16) for _ in range(30)]
    packed = [k.amx_pack_weight(w) for w in ws]
    x = torch.randn(M, K).to(torch.bfloat16)
    best = {}
    for rep in range(5):
        for kind in ("amx", "onednn"):
            t = time.perf_counter()
            if kind == "amx":
                for p in packed: k.amx_linear(x, p, None, None)
            else:
                for w in ws: torch.nn.functional.linear(x, w)
            dt = time.perf_counter() - t
            best[kind] = min(best.get(kind, 9), dt)
    fl = 2 * M * N * K * 30
    print(f"{name:8s} N {N:5d} K {K:5d}: amx {best['amx']*1e3:6.1f} ms ({fl/best['amx']/1e12:.2f} TFLOP/s)  aten {best['onednn']*1e3:6.1f} ms ({fl/best['onednn']/1e12:.2f})")
