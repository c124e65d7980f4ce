"""A one-row step with an env toggle off (A) and on (B), in turns: the first step after a 512 MB
sum and the 3 after it in a row."""
import sys, os, time, statistics
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode, var, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **opts), 1, context=70, max_new_tokens=rounds * 8 + 40)
a = torch.ones(128 * 1024 * 1024)
for _ in range(10): core.step()
res = {k: ([], []) for k in "AB"}; bws = []
for r in range(rounds):
    for k in ("AB" if r % 2 == 0 else "BA"):
        if k == "B": os.environ[var] = "1"
        else: os.environ.pop(var, None)
        t = time.perf_counter(); a.sum(); bws.append(512 * 1.048576 / (time.perf_counter() - t) / 1e3)
        ts = []
        for _ in range(4):
            t = time.perf_counter(); core.step(); ts.append(time.perf_counter() - t)
        res[k][0].append(ts[0]); res[k][1].append(statistics.median(ts[1:]))
print(f"{mode} {var}: sum {statistics.median(bws):.1f} GB/s")
for k in "AB":
    print(" ", k, f"first {statistics.median(res[k][0])*1e3:.3f} ms, in a row {statistics.median(res[k][1])*1e3:.3f} ms")
d0 = [b / a_ - 1 for a_, b in zip(res["A"][0], res["B"][0])]; d1 = [b / a_ - 1 for a_, b in zip(res["A"][1], res["B"][1])]
print(f"  B/A - 1 per round, median: first {statistics.median(d0)*100:+.1f} %, in a row {statistics.median(d1)*100:+.1f} %")
