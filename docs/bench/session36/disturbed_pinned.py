"""disturbed_steps.py with the main thread on CPU 0 and the OpenMP worker on CPU 1 (the
disturber is pinned to CPU 1 by the caller): every disturbance takes the worker's CPU."""
import os, sys, time, statistics
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode, reps, B = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
opts = {"quantization": "int8"} if mode.startswith("int8") else {"dtype": "bfloat16"}
kv = "int8" if mode == "int8+kv8" else "auto"
eng = InferenceEngine(model="smollm2", **opts)
for rep in range(reps):
    core = decoding_core(eng, B, context=70, kv_cache_dtype=kv, max_new_tokens=1100)
    for _ in range(5): core.step()
    tids = sorted(int(t) for t in os.listdir("/proc/self/task"))
    me = __import__("threading").get_native_id()
    os.sched_setaffinity(0, {0})
    for t in tids:
        if t != me: os.sched_setaffinity(t, {1})
    on, off = [], []
    for i in range(300):
        t0 = time.time(); s = time.perf_counter(); core.step(); d = time.perf_counter() - s
        w0, w1 = int(t0 * 1000) // 200, int((t0 + d) * 1000) // 200
        if w0 == w1:
            (on if w0 % 2 == 0 else off).append(d)
    mon, moff = statistics.median(on), statistics.median(off)
    print(f"{mode} B={B} pinned: disturbed {1e3*mon:.3f} ms ({len(on)}), quiet {1e3*moff:.3f} ms ({len(off)}), {100*(mon/moff-1):+.1f} %", flush=True)
    del core
