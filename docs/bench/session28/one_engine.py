"""Median decode-step time of one engine (this checkout's code and kernels) at batch B.

    PYTHONPATH=. .venv/bin/python docs/bench/session28/one_engine.py int8|bf16 BATCH STEPS
"""
import sys, time, statistics
import os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
mode = sys.argv[1]; B = int(sys.argv[2]); N = int(sys.argv[3])
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
core = decoding_core(InferenceEngine(model="smollm2", **opts), B, context=70, max_new_tokens=N + 40)
for _ in range(10): core.step()
ts = []
for _ in range(N):
    s = time.perf_counter(); core.step(); ts.append(time.perf_counter() - s)
print(f"{statistics.median(ts)*1e3:.3f}")
