"""Decode steps of B sequences at C keys (bf16, SmolLM2): median step ms of 100, and the
median 512 MB `sum` read between steps (the host's memory mood)."""
import statistics, sys, time
import torch
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
B, C = int(sys.argv[1]), int(sys.argv[2])
core = decoding_core(InferenceEngine(model="smollm2", dtype="bfloat16"), B, context=C, max_new_tokens=140)
a = torch.ones(128 * 1024 * 1024)
for _ in range(10):
    core.step()
steps, bw = [], []
for _ in range(100):
    t = time.perf_counter(); a.sum(); bw.append(a.numel() * 4 / (time.perf_counter() - t) / 1e9)
    t = time.perf_counter(); core.step(); steps.append(time.perf_counter() - t)
print(f"batch {B} at {C} keys: step {1e3 * statistics.median(steps):.2f} ms ({statistics.median(bw):.1f} GB/s)")
