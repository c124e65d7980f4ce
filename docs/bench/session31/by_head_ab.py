"""Decode attention split by query head at small batch (mode 0, by_head_ab.patch) against whole
groups per thread (mode 1), on one engine core, the modes alternating step by step; percentages
against mode 0. A `sum` of 512 MB before and after gives the host's memory mood.

    git worktree add /tmp/s31/ab e01e7ba && cd /tmp/s31/ab && git apply .../by_head_ab.patch
    PYTHONPATH=. /work/main/.venv/bin/python .../by_head_ab.py int8|bf16 BATCH STEPS
"""
import sys, time, statistics, collections, os
sys.path.insert(0, "benchmarks")  # run from the worktree root
mode = sys.argv[1]; B = int(sys.argv[2]); N = int(sys.argv[3])
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
core = decoding_core(InferenceEngine(model="smollm2", **opts), B, context=int(os.environ.get("CONTEXT", "70")), max_new_tokens=2 * N + 40)
for _ in range(10): core.step()
import torch
_a = torch.ones(128 * 1024 * 1024)
def bw():
    t = time.perf_counter(); _a.sum(); return _a.numel() * 4 / (time.perf_counter() - t) / 1e9
bws = [bw()]
MODES = [int(x) for x in os.environ.get("MODES", "1,0").split(",")]
times = collections.defaultdict(list)
for i in range(N):
    for m in (MODES if i % 2 else MODES[::-1]):
        k.set_ab_mode(m)
        s = time.perf_counter(); core.step(); times[m].append(time.perf_counter() - s)
bws.append(bw())
base = statistics.median(times[0])
print(f"  sum bandwidth before/after: {bws[0]:.1f} / {bws[1]:.1f} GB/s")
print(f"{mode} batch {B}: " + ", ".join(f"mode {m} {statistics.median(times[m])*1e3:.3f} ms ({(statistics.median(times[m])/base-1)*100:+.1f} %)" for m in MODES))
