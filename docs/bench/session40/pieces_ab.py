"""The decode step at one batch with the stack's loops cut into 8 pieces a share (the default
from 16 rows) or whole shares, alternating step by step (a throwaway build reading PIECES)."""
import os, sys, time, statistics
sys.path.insert(0, "/work/main/benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode, batch = sys.argv[1], int(sys.argv[2])
opts = {"bf16": ({"dtype": "bfloat16"}, "auto"), "int8": ({"quantization": "int8"}, "auto"), "int8+kv8": ({"quantization": "int8"}, "int8")}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **opts[0]), batch, context=134, kv_cache_dtype=opts[1], max_new_tokens=700)
ts = {"8": [], "1": []}
for r in range(int(sys.argv[3]) if len(sys.argv) > 3 else 200):
    for m in ts:
        os.environ["PIECES"] = m
        t = time.perf_counter(); core.step(); ts[m].append(time.perf_counter() - t)
a, b = statistics.median(ts["8"][5:]), statistics.median(ts["1"][5:])
print(f"{mode} batch {batch}: 8 pieces {a*1e3:.2f} ms, whole shares {b*1e3:.2f} ms, median per-pair ratio whole/8 {statistics.median(y/x for x,y in zip(ts['8'][5:], ts['1'][5:])):.3f}")
