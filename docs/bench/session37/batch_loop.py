"""Session 37: decode steps at a batch for `perf record -p PID` (as session 34's perf_loop.py, any batch):
    PYTHONPATH=. python docs/bench/session37/batch_loop.py int8+kv8 SECONDS BATCH"""
import sys, time
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode, secs, batch = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
opts = {"quantization": "int8"} if mode.startswith("int8") else {"dtype": "bfloat16"}
kv = "int8" if mode == "int8+kv8" else "auto"
eng = InferenceEngine(model="smollm2", **opts)
t = time.perf_counter(); n = 0; tt = 0.0
while time.perf_counter() - t < secs:
    core = decoding_core(eng, batch, context=130, kv_cache_dtype=kv, max_new_tokens=140)
    for _ in range(5): core.step()
    s = time.perf_counter()
    for _ in range(100): core.step()
    tt += time.perf_counter() - s; n += 100
    del core
print(f"{n} steps, {1e3*tt/n:.3f} ms/step", flush=True)
