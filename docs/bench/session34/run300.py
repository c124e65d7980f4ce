import sys, time, statistics
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]
opts = {"quantization": "int8"} if mode.startswith("int8") else {"dtype": "bfloat16"}
kv = "int8" if mode == "int8+kv8" else "auto"
eng = InferenceEngine(model="smollm2", **opts)
for rep in range(int(sys.argv[2]) if len(sys.argv) > 2 else 3):
    core = decoding_core(eng, 1, context=70, kv_cache_dtype=kv, max_new_tokens=400)
    ts = []
    for i in range(300):
        s = time.perf_counter(); core.step(); ts.append(time.perf_counter() - s)
    print(f"{mode}: step median {1e3*statistics.median(ts):.3f} ms", file=sys.stderr, flush=True)
    del core
