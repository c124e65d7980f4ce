"""A/B of warming the step's code lines into L2 twice a layer (the scratch build's set_ab_mode:
0 off, 1 on), modes alternating step by step on one engine core.
    PYTHONPATH=. python warm_ab.py lines.json int8|bf16 BATCH STEPS"""
import collections, json, os, statistics, sys, time
sys.path.insert(0, "/work/main/benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
lines = json.load(open(sys.argv[1])); mode = sys.argv[2]; B = int(sys.argv[3]); N = int(sys.argv[4])
def base_of(path, off):
    for l in open("/proc/self/maps"):
        f = l.split()
        if len(f) >= 6 and f[5] == path and "x" in f[1]:
            a, b = (int(x, 16) for x in f[0].split("-")); fo = int(f[2], 16)
            if fo <= off < fo + (b - a): return a + off - fo
    return None
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
core = decoding_core(InferenceEngine(model="smollm2", **opts), B, context=int(os.environ.get("CONTEXT", "70")), max_new_tokens=2 * N + 40)
addrs = sorted(a for p, o, c in lines if (a := base_of(p, o)) is not None)
ranges = []
for a in addrs:
    if ranges and a <= ranges[-1][0] + ranges[-1][1]: ranges[-1][1] = max(ranges[-1][1], a + 64 - ranges[-1][0])
    else: ranges.append([a, 64])
print(f"{len(addrs)} of {len(lines)} lines mapped, {len(ranges)} ranges, {sum(r[1] for r in ranges)//1024} KB")
k.set_warm_ranges(torch.tensor(ranges, dtype=torch.long).view(-1, 2))
for _ in range(10): core.step()
times = collections.defaultdict(list)
for i in range(N):
    for m in ((0, 1) if i % 2 else (1, 0)):
        k.set_ab_mode(m)
        s = time.perf_counter(); core.step(); times[m].append(time.perf_counter() - s)
b = statistics.median(times[0]) * 1e3
print(f"{mode} batch {B}: off {b:.3f} ms, warm {statistics.median(times[1])*1e3:.3f} ms ({(statistics.median(times[1])*1e3/b-1)*100:+.1f} %)")
