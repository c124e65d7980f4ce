"""Session 38: dpbf16_linear against dpbf16_gated_linear (gate_up's kernel) with and without its
SiLU·mul epilogue, at 32, 512 and 2,000 rows, 1 and 2 threads, weights warm (in L2):
    PYTHONPATH=. .venv/bin/python docs/bench/session38/bf16_gated_rate.py"""
import sys, time, statistics, torch
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
N, K = 3072, 576
torch.manual_seed(0)
w = k.dpbf16_pack_weight(torch.randn(N, K).bfloat16())
wg = k.dpbf16_pack_gated(torch.randn(N, K).bfloat16())
for threads in (1, 2):
    torch.set_num_threads(threads)
    for M in (32, 512, 2000):
        x = torch.randn(M, K).bfloat16()
        for name, fn in (("plain", lambda: k.dpbf16_linear(x, w)), ("gated", lambda: k.dpbf16_gated_linear(x, wg, None, True)), ("gated, no silu", lambda: k.dpbf16_gated_linear(x, wg, None, False))):
            reps = max(3, 2000 // M); ts = []
            for r in range(5):
                s = time.perf_counter()
                for i in range(reps): fn()
                ts.append((time.perf_counter() - s) / reps)
            t = statistics.median(ts)
            print(f"{threads}t M={M} {name}: {M*N*K/t/1e9:.0f} GMAC/s", flush=True)
