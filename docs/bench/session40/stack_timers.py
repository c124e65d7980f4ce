"""Session 40: 600 decode steps of one core (batch, context 134) for a throwaway build whose
DecodeStack::layers_forward times each call and prints the sums per step every 200 steps (with
TIMERS set; the build is described in stack_timers.txt): PYTHONPATH=<that tree> python stack_timers.py bf16 32"""
import os, sys, time, statistics
sys.path.insert(0, "/work/main/benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode, batch = sys.argv[1], int(sys.argv[2])
opts = {"bf16": ({"dtype": "bfloat16"}, "auto"), "int8": ({"quantization": "int8"}, "auto"), "int8+kv8": ({"quantization": "int8"}, "int8")}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **opts[0]), batch, context=134, kv_cache_dtype=opts[1], max_new_tokens=700)
os.environ["TIMERS"] = "1"
ts = []
for r in range(600):
    t = time.perf_counter(); core.step(); ts.append(time.perf_counter() - t)
print(f"{mode} batch {batch}: step median {statistics.median(ts)*1e3:.2f} ms")
