"""Session 34: a one-row decode loop for `perf record -F 2999 -p PID -- sleep 6` (both threads):
    PYTHONPATH=. python docs/bench/session34/perf_loop.py int8 14 &  then perf on its pid"""
import sys, time, torch
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]
opts = {"quantization": "int8"} if mode.startswith("int8") else {"dtype": "bfloat16"}
kv = "int8" if mode == "int8+kv8" else "auto"
eng = InferenceEngine(model="smollm2", **opts)
t = time.perf_counter(); n = 0; tt = 0.0
while time.perf_counter() - t < float(sys.argv[2]):
    core = decoding_core(eng, 1, context=70, kv_cache_dtype=kv, max_new_tokens=200)
    for _ in range(10): core.step()
    s = time.perf_counter()
    for _ in range(150): core.step()
    tt += time.perf_counter() - s; n += 150
    del core
print(f"{n} steps, {1e3*tt/n:.3f} ms/step", flush=True)
