"""One decode-attention call per layer repeated for SECONDS (48 x 250, 30 layers): MODE "warm"
(layer 0 thirty times, K/V in L3) or "cold"; DTYPE bf16 or fp32. Run under `perf record` for the
annotations in BENCHMARKS.md, session 19:

    PYTHONPATH=. perf record -o warm.data .venv/bin/python docs/bench/session19/attention_loop.py warm bf16 5
"""
import sys, time, torch
from roseinfer.kernels import load_cpu_kernels
k_ = load_cpu_kernels()
LAYERS, HEADS, KVH, D, BLOCK = 30, 9, 3, 64, 16
b, n = 48, 250
mode = sys.argv[1]; dtype = {"bf16": torch.bfloat16, "fp32": torch.float32}[sys.argv[2]]
per = -(-n // BLOCK); nb = 4 * b * per
torch.manual_seed(0)
caches = [torch.randn(2, nb, KVH, BLOCK, D, dtype=dtype) for _ in range(LAYERS)]
q = torch.randn(b, HEADS, D, dtype=dtype); k = torch.randn(b, KVH, D, dtype=dtype); v = torch.randn(b, KVH, D, dtype=dtype)
tables = torch.arange(b * per).view(b, per)
lens = torch.full((b,), n, dtype=torch.long)
slots = tables[torch.arange(b), (lens - 1) // BLOCK] * BLOCK + (lens - 1) % BLOCK
layers = [0] * LAYERS if mode == "warm" else range(LAYERS)
t0 = time.perf_counter(); steps = 0
while time.perf_counter() - t0 < float(sys.argv[3]):
    for l in layers:
        kc, vc = caches[l]
        k_.paged_decode_attention(q, k, v, kc, vc, slots, tables, lens, D**-0.5)
    steps += 1
print(mode, sys.argv[2], (time.perf_counter() - t0) / steps * 1e3, "ms/step")
