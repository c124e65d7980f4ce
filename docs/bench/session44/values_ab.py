"""One engine, an environment variable at several values in turns (first value = the baseline):
the first step after a 512 MB sum and the steps after it; each value's median of per-round
ratios to the baseline.   values_ab.py MODE VAR ROUNDS V0 V1 ...   (V = '-' for unset)"""
import sys, os, time, statistics
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode, var, rounds, *vals = sys.argv[1:]
rounds = int(rounds)
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **opts), int(os.environ.get("ROWS", "1")), context=70, max_new_tokens=rounds * 4 * len(vals) + 40)
a = torch.ones(128 * 1024 * 1024)
for _ in range(10): core.step()
res = {v: ([], []) for v in vals}; bws = []
for r in range(rounds):
    order = vals if r % 2 == 0 else vals[::-1]
    for v in order:
        if v == "-": os.environ.pop(var, None)
        else: os.environ[var] = v
        t = time.perf_counter(); a.sum(); bws.append(512 * 1.048576 / (time.perf_counter() - t) / 1e3)
        ts = []
        for _ in range(4):
            t = time.perf_counter(); core.step(); ts.append(time.perf_counter() - t)
        res[v][0].append(ts[0]); res[v][1].append(statistics.median(ts[1:]))
os.environ.pop(var, None)
print(f"{mode} {var}: sum {statistics.median(bws):.1f} GB/s; rounds {rounds}")
b = vals[0]
for v in vals:
    d0 = statistics.median(x / y - 1 for x, y in zip(res[v][0], res[b][0]))
    d1 = statistics.median(x / y - 1 for x, y in zip(res[v][1], res[b][1]))
    print(f"  {var}={v}: first {statistics.median(res[v][0])*1e3:.3f} ms ({d0*100:+.1f} %), in a row {statistics.median(res[v][1])*1e3:.3f} ms ({d1*100:+.1f} %)")
