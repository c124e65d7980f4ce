"""A/B of a kernel build's runtime switch (`set_ab_mode`, added by this session's
`fused_qkv_ab.patch`, `early_prefetch_ab.patch` or `norm_ahead_ab.patch`) on one engine core, the
modes alternating step by step; CONTEXT=N sets the prompts' length (default 70). Session 27's
script with that variable.

    git apply docs/bench/session28/fused_qkv_ab.patch   # in a scratch worktree
    PYTHONPATH=. .venv/bin/python docs/bench/session28/flag_ab.py int8|bf16 BATCH STEPS [0,1,2]
"""
import sys, time, statistics, collections
import os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
mode = sys.argv[1]; B = int(sys.argv[2]); N = int(sys.argv[3])
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
core = decoding_core(InferenceEngine(model="smollm2", **opts), B, context=int(os.environ.get("CONTEXT", "70")), max_new_tokens=2 * N + 40)
for _ in range(10): core.step()
MODES = [int(x) for x in sys.argv[4].split(",")] if len(sys.argv) > 4 else [0, 1]
times = collections.defaultdict(list)
for i in range(N):
    for m in (MODES if i % 2 else MODES[::-1]):
        k.set_ab_mode(m)
        s = time.perf_counter(); core.step(); times[m].append(time.perf_counter() - s)
base = statistics.median(times[MODES[0]]) * 1e3
print(f"{mode} batch {B}: " + ", ".join(f"mode {m} {statistics.median(times[m])*1e3:.3f} ms ({(statistics.median(times[m])*1e3/base-1)*100:+.1f} %)" for m in MODES))
