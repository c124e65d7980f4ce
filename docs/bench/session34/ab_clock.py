"""A/B in one process: the experiment build's switch is on in even wall-clock seconds. Steps
classified by the second they start in; median of each side per rep of 400 steps."""
import sys, time, statistics
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1]
opts = {"quantization": "int8"} if mode.startswith("int8") else {"dtype": "bfloat16"}
kv = "int8" if mode == "int8+kv8" else "auto"
B = int(sys.argv[3]) if len(sys.argv) > 3 else 1
ctx = int(sys.argv[4]) if len(sys.argv) > 4 else 70
eng = InferenceEngine(model="smollm2", **opts)
for rep in range(int(sys.argv[2])):
    core = decoding_core(eng, B, context=ctx, kv_cache_dtype=kv, max_new_tokens=1100)
    on, off = [], []
    for i in range(1000 if B == 1 else 200):
        t0 = time.time(); s = time.perf_counter(); core.step(); d = time.perf_counter() - s
        # steps longer than the 20 ms window: the switch is read as the stack starts, ~0.3 ms in
        w0, w1 = int(t0 * 1000) // 20, (int((t0 + d) * 1000) // 20 if d < 0.01 else int((t0 + 0.001) * 1000) // 20)
        if w0 == w1:
            (on if w0 % 2 == 0 else off).append(d)
    mon, moff = statistics.median(on), statistics.median(off)
    print(f"{mode} B={B} ctx={ctx}: on {1e3*mon:.3f} ms ({len(on)}), off {1e3*moff:.3f} ms ({len(off)}), on/off {100*(mon/moff-1):+.1f} %", flush=True)
    del core
