"""A throwaway build's env toggle VAR against the default, alternating step by step in one core:
    PYTHONPATH=<tree> python env_ab.py VAR MODE BATCH CONTEXT STEPS"""
import os, statistics, sys, time
sys.path.insert(0, "/work/main/benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
var, mode, batch, context, steps = sys.argv[1], sys.argv[2], *(int(x) for x in sys.argv[3:6])
opts = {"bf16": ({"dtype": "bfloat16"}, "auto"), "int8": ({"quantization": "int8"}, "auto"),
        "int8+kv8": ({"quantization": "int8"}, "int8")}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **opts[0]), batch, context=context,
                     kv_cache_dtype=opts[1], max_new_tokens=steps * 2 + 20)
times = {"default": [], var: []}
for _ in range(steps):
    for name in times:
        if name == var: os.environ[var] = "1"
        else: os.environ.pop(var, None)
        t = time.perf_counter(); core.step(); times[name].append(time.perf_counter() - t)
a, b = statistics.median(times["default"]), statistics.median(times[var])
r = statistics.median(y / x for x, y in zip(times["default"], times[var]))
print(f"{mode} batch {batch} context {context}: default {a*1e3:.3f} ms, {var} {b*1e3:.3f} ms, median per-pair ratio {r:.3f}", flush=True)
