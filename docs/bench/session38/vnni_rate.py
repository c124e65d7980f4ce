"""Session 38: vnni_int8_linear's multiply-add rate at M rows, weights warm (one [N, K] repeated,
in L2) or cold (30 copies in turn, from DRAM), on 1 and 2 threads, against vpdpbusd's peak
(two a cycle on Zen 5: mix_peak.c), vnni_int8_gated_linear (SiLU·mul, gate_up's kernel) and
dpbf16_linear beside it (since the gated column was added, after vnni_rate.txt's first runs).
    PYTHONPATH=. .venv/bin/python docs/bench/session38/vnni_rate.py [M ...]"""
import sys, time, statistics
import torch
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
Ms = [int(a) for a in sys.argv[1:]] or [1, 8, 32, 128, 512]
N, K = 3072, 576  # gate_up's shape
torch.manual_seed(0)
w8 = [k.vnni_pack_weight(torch.randint(-127, 128, (N, K), dtype=torch.int8)) for _ in range(30)]
wb = [k.dpbf16_pack_weight(torch.randn(N, K).bfloat16()) for _ in range(30)]
wg = [k.vnni_pack_gated(torch.randint(-127, 128, (N, K), dtype=torch.int8)) for _ in range(30)]
scale = torch.rand(N).bfloat16()
def rate(fn, ws, M, warm):
    x = torch.randn(M, K).bfloat16()
    reps = max(3, 3000 // M)
    ts = []
    for r in range(5):
        s = time.perf_counter()
        for i in range(reps):
            fn(x, ws[0 if warm else i % 30])
        ts.append((time.perf_counter() - s) / reps)
    t = statistics.median(ts)
    return M * N * K / t / 1e9, t * 1e6
for threads in (1, 2):
    torch.set_num_threads(threads)
    for M in Ms:
        for warm in (True, False):
            g8, t8 = rate(lambda x, w: k.vnni_int8_linear(x, w, scale), w8, M, warm)
            gg, tg = rate(lambda x, w: k.vnni_int8_gated_linear(x, w, scale, None, True), wg, M, warm)
            gb, tb = rate(lambda x, w: k.dpbf16_linear(x, w), wb, M, warm)
            print(f"{threads} thread(s) M={M:4d} {'warm' if warm else 'cold'}: int8 {g8:6.1f} GMAC/s ({t8:7.1f} us), "
                  f"int8 gated {gg:6.1f} GMAC/s ({tg:7.1f} us), bf16 {gb:6.1f} GMAC/s ({tb:7.1f} us)", flush=True)
