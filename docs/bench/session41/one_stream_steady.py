import statistics, sys, time, torch
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from one_stream import MODES, WEIGHT_BYTES
from roseinfer.engine import InferenceEngine
rounds, run = int(sys.argv[1]), int(sys.argv[2])
cores = {m: decoding_core(InferenceEngine(model="smollm2", **o), 1, context=70, kv_cache_dtype=kv, max_new_tokens=rounds * run + 60) for m, (o, kv, _) in MODES.items()}
a = torch.ones(128 * 1024 * 1024)
for _ in range(10):
    for c in cores.values(): c.step()
cold = {m: [] for m in MODES}; steady = {m: [] for m in MODES}; bws = []
for _ in range(rounds):
    t = time.perf_counter(); a.sum(); bw = a.numel() * 4 / (time.perf_counter() - t); bws.append(bw / 1e9)
    for m, c in cores.items():
        ts = []
        for _ in range(run):
            t = time.perf_counter(); c.step(); ts.append(time.perf_counter() - t)
        floor = WEIGHT_BYTES[MODES[m][2]] / bw
        cold[m].append(ts[0] / floor); steady[m].append(statistics.median(ts[1:]) / floor)
print(f"sum median {statistics.median(bws):.1f} GB/s")
for m in MODES:
    print(f"{m}: first step of a run {statistics.median(cold[m]):.2f}x, the next {run - 1} {statistics.median(steady[m]):.2f}x the floor")
