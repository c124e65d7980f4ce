"""Sampler.__call__ with and without its @torch.inference_mode() decorator, alternating step by step
on one engine core (int8, one row).

    PYTHONPATH=. .venv/bin/python docs/bench/session28/decorator_ab.py
"""
import os
import sys, time, statistics
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
import roseinfer.layers.sampler as S
core = decoding_core(InferenceEngine(model="smollm2", quantization="int8"), 1, context=70, max_new_tokens=700)
decorated = S.Sampler.__call__
plain = decorated.__wrapped__
for _ in range(10): core.step()
times = {0: [], 1: []}
for i in range(300):
    for m in ((0, 1) if i % 2 else (1, 0)):
        S.Sampler.__call__ = decorated if m == 0 else plain
        s = time.perf_counter(); core.step(); times[m].append(time.perf_counter() - s)
a, b = (statistics.median(times[m]) * 1e3 for m in (0, 1))
print(f"decorated {a:.3f} ms, plain {b:.3f} ms ({(b/a-1)*100:+.1f} %)")
