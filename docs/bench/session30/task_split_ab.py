"""Static split (mode 0) against work stealing (mode 1) of the linear kernels' tasks, on one
engine core, modes alternating step by step; prints the step medians and, per step, the linears'
summed call wall time, finish spread (last thread end - first thread end), the last thread's
start delay, and the busiest / least busy thread's time.
    PYTHONPATH=. .venv/bin/python /tmp/s30/steal_ab.py int8|bf16 BATCH STEPS"""
import sys, time, statistics, collections, os
sys.path.insert(0, "benchmarks")
mode = sys.argv[1]; B = int(sys.argv[2]); N = int(sys.argv[3])
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
core = decoding_core(InferenceEngine(model="smollm2", **opts), B, context=int(os.environ.get("CONTEXT", "70")), max_new_tokens=2 * N + 40)
for _ in range(10): core.step()
import torch
_a = torch.ones(128 * 1024 * 1024)
def bw():
    t = time.perf_counter(); _a.sum(); return _a.numel() * 4 / (time.perf_counter() - t) / 1e9
bws = [bw()]
MODES = [int(x) for x in os.environ.get("MODES", "0,1,2").split(",")]
times = collections.defaultdict(list); stats = collections.defaultdict(list)
for i in range(N):
    for m in (MODES if i % 2 else MODES[::-1]):
        k.set_ab_mode(m); k.task_stats()
        s = time.perf_counter(); core.step(); times[m].append(time.perf_counter() - s)
        stats[m].append(k.task_stats())
bws.append(bw())
base = statistics.median(times[0])
print(f"  sum bandwidth before/after: {bws[0]:.1f} / {bws[1]:.1f} GB/s")
print(f"{mode} batch {B}: " + ", ".join(f"mode {m} {statistics.median(times[m])*1e3:.3f} ms ({(statistics.median(times[m])/base-1)*100:+.1f} %)" for m in MODES))
for m in MODES:
    cols = list(zip(*stats[m]))
    med = [statistics.median(c) for c in cols]
    print(f"  mode {m}: {med[0]:.0f} calls/step; per step (us): wall {med[1]/1e3:.0f}, finish spread {med[2]/1e3:.0f}, last start delay {med[3]/1e3:.0f}, busiest {med[4]/1e3:.0f}, least busy {med[5]/1e3:.0f}, busy t0 {med[6]/1e3:.0f} t1 {med[7]/1e3:.0f}, start t0 {med[10]/1e3:.0f} t1 {med[11]/1e3:.0f}, LM head wall {med[8]/1e3:.0f} spread {med[9]/1e3:.0f}")
