import sys, time, statistics, torch
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]; n = int(sys.argv[2])
opts = {"bf16": ({"dtype": "bfloat16"}, "auto"), "int8": ({"quantization": "int8"}, "auto"), "int8+kv8": ({"quantization": "int8"}, "int8")}[mode]
eng = InferenceEngine(model="smollm2", **opts[0])
cores = [decoding_core(eng, 1, context=70, max_new_tokens=n + 20, kv_cache_dtype=opts[1]) for _ in range(8)]
import gc; gc.collect(); gc.freeze()
print("go", flush=True); time.sleep(3)
ts = []
for core in cores:
    for i in range(n):
        t = time.perf_counter(); core.step(); ts.append(time.perf_counter() - t)
print(f"{mode}: step median {statistics.median(ts)*1e3:.3f} ms", flush=True)
