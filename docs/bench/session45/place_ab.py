"""values_ab.py with the placement per round: a cache line's round trip between two threads
(rt.so) splits the rounds into one CCD (< 250 ns) and two (>= 250 ns).
   place_ab.py MODE VAR ROUNDS V0 V1 ...   (V = '-' for unset)"""
import sys, os, time, statistics, ctypes
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
rt = ctypes.CDLL(os.environ.get("RT_SO", "/tmp/s45/rt.so")); rt.round_trip_ns.restype = ctypes.c_double
mode, var, rounds, *vals = sys.argv[1:]
rounds = int(rounds)
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **opts), int(os.environ.get("ROWS", "1")), context=int(os.environ.get("CTX", "70")), max_new_tokens=rounds * 4 * len(vals) + 40)
a = torch.ones(128 * 1024 * 1024)
for _ in range(10): core.step()
rows = []  # (rt, bw, {v: (first, inrow)})
for r in range(rounds):
    order = vals if r % 2 == 0 else vals[::-1]
    time.sleep(0.002)
    trip = rt.round_trip_ns(2000)
    got = {}
    for v in order:
        if v == "-": os.environ.pop(var, None)
        else: os.environ[var] = v
        t = time.perf_counter(); a.sum(); bw = 512 * 1.048576 / (time.perf_counter() - t) / 1e3
        ts = []
        for _ in range(4):
            t = time.perf_counter(); core.step(); ts.append(time.perf_counter() - t)
        got[v] = (ts[0], statistics.median(ts[1:]))
    rows.append((trip, bw, got))
os.environ.pop(var, None)
b = vals[0]
for name, sel in (("one CCD (rt < 250 ns)", [x for x in rows if x[0] < 250]), ("two CCDs (rt >= 250 ns)", [x for x in rows if x[0] >= 250])):
    if not sel: continue
    print(f"{mode} {var}, {name}: {len(sel)} rounds, rt {statistics.median(x[0] for x in sel):.0f} ns, sum {statistics.median(x[1] for x in sel):.1f} GB/s")
    for v in vals:
        f = [x[2][v][0] for x in sel]; i = [x[2][v][1] for x in sel]
        d0 = statistics.median(x[2][v][0] / x[2][b][0] - 1 for x in sel)
        d1 = statistics.median(x[2][v][1] / x[2][b][1] - 1 for x in sel)
        print(f"  {var}={v}: first {statistics.median(f)*1e3:.3f} ms ({d0*100:+.1f} %), in a row {statistics.median(i)*1e3:.3f} ms ({d1*100:+.1f} %)")
