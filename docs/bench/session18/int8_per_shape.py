# Cold per-call time of int8_linear at batch 1, per SmolLM2 shape (30 copies cycled: DRAM-cold).
import time, torch, statistics, sys
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
H, I, KV = 576, 1536, 192
shapes = {"qkv": (H + 2 * KV, H), "o": (H, H), "gate_up": (2 * I, H), "down": (H, I)}
for name, (n, kk) in shapes.items():
    ws = [torch.randint(-127, 128, (n, kk), dtype=torch.int8) for _ in range(60)]
    s = torch.rand(n); x = torch.randn(1, kk)
    flush = torch.ones(64 * 1024 * 1024)
    ts = []
    for rep in range(5):
        flush.sum()
        for w in ws:
            t = time.perf_counter(); k.int8_linear(x, w, s, None); ts.append(time.perf_counter() - t)
    med = statistics.median(ts)
    print(f"{name:8s} {n}x{kk}: {med*1e6:7.1f} us  {n*kk/med/1e9:5.1f} GB/s")
