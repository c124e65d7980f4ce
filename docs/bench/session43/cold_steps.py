import sys, time, statistics, torch
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]; n = int(sys.argv[2]); cold = sys.argv[3] == "cold"
opts = {"bf16": ({"dtype": "bfloat16"}, "auto"), "int8": ({"quantization": "int8"}, "auto"), "int8+kv8": ({"quantization": "int8"}, "int8")}[mode]
import os; eng = InferenceEngine(model="smollm2", block_size=int(os.environ.get("BS", "16")), **opts[0])
core = decoding_core(eng, 1, context=int(sys.argv[4]) if len(sys.argv) > 4 else 70, max_new_tokens=n + 20, kv_cache_dtype=opts[1])
a = torch.ones(128 * 1024 * 1024)
ts = []; bw = []
for i in range(n):
    if cold:
        t = time.perf_counter(); a.sum(); bw.append(a.numel() * 4 / (time.perf_counter() - t) / 1e9)
    t = time.perf_counter(); core.step(); ts.append(time.perf_counter() - t)
print(f"{mode} {sys.argv[3]}: step median {statistics.median(ts)*1e3:.3f} ms, sum {statistics.median(bw) if bw else 0:.1f} GB/s", flush=True)
