"""Session 38: A/B in one process, as session 34's ab_clock.py, with 100 ms windows (steps of many
rows last 10-30 ms): the experiment build's switch is on in even 100 ms windows of the wall clock.
Steps are classified by the window they start and end in (those across two are left out);
median of each side per rep of 300 steps.
    AB=1 PYTHONPATH=. .venv/bin/python docs/bench/session38/ab_clock.py MODE REPS [BATCH] [CTX]"""
import sys, time, statistics
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]
opts = {"quantization": "int8"} if mode.startswith("int8") else {"dtype": "bfloat16"}
kv = "int8" if mode.endswith("kv8") else "auto"
B = int(sys.argv[3]) if len(sys.argv) > 3 else 32
ctx = int(sys.argv[4]) if len(sys.argv) > 4 else 130
eng = InferenceEngine(model="smollm2", **opts)
for rep in range(int(sys.argv[2])):
    core = decoding_core(eng, B, context=ctx, kv_cache_dtype=kv, max_new_tokens=310)
    on, off = [], []
    for i in range(300):
        t0 = time.time(); s = time.perf_counter(); core.step(); d = time.perf_counter() - s
        w0, w1 = int(t0 * 10), int((t0 + d) * 10)
        if w0 == w1:
            (on if w0 % 2 == 0 else off).append(d)
    mon, moff = statistics.median(on), statistics.median(off)
    print(f"{mode} B={B} ctx={ctx}+: on {1e3*mon:.3f} ms ({len(on)}), off {1e3*moff:.3f} ms ({len(off)}), on/off {100*(mon/moff-1):+.1f} %", flush=True)
    del core
