"""env_ab.py with a value: VAR=VALUE against VAR unset, alternating step by step in one core:
    PYTHONPATH=<tree> python env_ab2.py VAR VALUE MODE BATCH CONTEXT STEPS"""
import os, statistics, sys, time
sys.path.insert(0, "/work/main/benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
var, value, mode, batch, context, steps = sys.argv[1], sys.argv[2], sys.argv[3], *(int(x) for x in sys.argv[4:7])
opts = {"bf16": ({"dtype": "bfloat16"}, "auto"), "int8": ({"quantization": "int8"}, "auto"),
        "int8+kv8": ({"quantization": "int8"}, "int8")}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **opts[0]), batch, context=context,
                     kv_cache_dtype=opts[1], max_new_tokens=steps * 2 + 20)
times = {"default": [], "set": []}
for _ in range(steps):
    for name in times:
        if name == "set": os.environ[var] = value
        else: os.environ.pop(var, None)
        t = time.perf_counter(); core.step(); times[name].append(time.perf_counter() - t)
a, b = statistics.median(times["default"]), statistics.median(times["set"])
r = statistics.median(y / x for x, y in zip(times["default"], times["set"]))
print(f"{mode} batch {batch} context {context}: default {a*1e3:.3f} ms, {var}={value} {b*1e3:.3f} ms, median per-pair ratio {r:.3f}", flush=True)
