"""Step time by position after a 512 MB sum: 1st, 2nd, ... 8th in a row (one-row int8)."""
import sys, time, statistics
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[mode]
rounds = int(sys.argv[2])
core = decoding_core(InferenceEngine(model="smollm2", **opts), 1, context=70, max_new_tokens=rounds * 8 + 40)
a = torch.ones(128 * 1024 * 1024)
for _ in range(10): core.step()
pos = [[] for _ in range(8)]; bws = []
for r in range(rounds):
    t = time.perf_counter(); a.sum(); bws.append(512 * 1.048576 / (time.perf_counter() - t) / 1e3)
    for i in range(8):
        t = time.perf_counter(); core.step(); pos[i].append(time.perf_counter() - t)
print(mode, f"sum {statistics.median(bws):.1f} GB/s;", " ".join(f"{statistics.median(p)*1e3:.3f}" for p in pos))
