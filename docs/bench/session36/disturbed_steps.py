"""Decode steps at a batch, classed by whether they ran wholly inside a disturbed 200 ms window
(disturb_ab.py: busy 0.1 ms of every 0.9 ms in even windows) or wholly inside a quiet one.
    PYTHONPATH=. python docs/bench/session36/disturbed_steps.py MODE RUNS BATCH [pinned]
With `pinned`, the main thread runs on CPU 0 and every other thread (the OpenMP worker) on CPU 1;
start the disturber with `taskset -c 1` so that every disturbance takes the worker's CPU."""
import os, sys, threading, time, statistics
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode, reps, B = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
pinned = len(sys.argv) > 4 and sys.argv[4] == "pinned"
opts = {"quantization": "int8"} if mode.startswith("int8") else {"dtype": "bfloat16"}
kv = "int8" if mode == "int8+kv8" else "auto"
eng = InferenceEngine(model="smollm2", **opts)
for rep in range(reps):
    core = decoding_core(eng, B, context=70, kv_cache_dtype=kv, max_new_tokens=1100)
    if pinned:
        for _ in range(5): core.step()  # the worker exists from the first region
        me = threading.get_native_id()
        os.sched_setaffinity(0, {0})
        for t in (int(t) for t in os.listdir("/proc/self/task")):
            if t != me: os.sched_setaffinity(t, {1})
    on, off = [], []
    for i in range(1000 if B == 1 else 300):
        t0 = time.time(); s = time.perf_counter(); core.step(); d = time.perf_counter() - s
        w0, w1 = int(t0 * 1000) // 200, int((t0 + d) * 1000) // 200
        if w0 == w1:
            (on if w0 % 2 == 0 else off).append(d)
    mon, moff = statistics.median(on), statistics.median(off)
    print(f"{mode} B={B}{' pinned' if pinned else ''}: disturbed {1e3*mon:.3f} ms ({len(on)}), quiet {1e3*moff:.3f} ms ({len(off)}), {100*(mon/moff-1):+.1f} %", flush=True)
    del core
