"""Session 37: median decode step at each BATCH:STEPS, from the tree it runs in (processes in turns):
    PYTHONPATH=. python docs/bench/session37/steps_turns.py int8+kv8 [32:100,1:300]"""
import sys, time, statistics
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]
opts = {"quantization": "int8"} if mode.startswith("int8") else {"dtype": "bfloat16"}
kv = "int8" if mode == "int8+kv8" else "auto"
eng = InferenceEngine(model="smollm2", **opts)
out = []
for batch, n in [(int(b), int(k)) for b, k in (x.split(":") for x in (sys.argv[2] if len(sys.argv) > 2 else "32:100,1:300").split(","))]:
    core = decoding_core(eng, batch, context=130, kv_cache_dtype=kv, max_new_tokens=n + 20)
    for _ in range(10): core.step()
    ts = []
    for _ in range(n):
        s = time.perf_counter(); core.step(); ts.append(time.perf_counter() - s)
    out.append(f"batch {batch}: {1e3*statistics.median(ts):.3f} ms")
    del core
print(mode, ", ".join(out), flush=True)
