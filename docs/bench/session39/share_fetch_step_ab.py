import os, sys, time, statistics
sys.path.insert(0, "/work/main/benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode, batch = sys.argv[1], int(sys.argv[2])
opts = {"bf16": ({"dtype": "bfloat16"}, "auto"), "int8": ({"quantization": "int8"}, "auto"), "int8+kv8": ({"quantization": "int8"}, "int8")}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **opts[0]), batch, context=134, kv_cache_dtype=opts[1], max_new_tokens=700)
ts = {"piece": [], "share": []}
for r in range(int(sys.argv[3]) if len(sys.argv) > 3 else 200):
    for m in ts:
        if m == "piece": os.environ["PIECE"] = "1"
        else: os.environ.pop("PIECE", None)
        t = time.perf_counter(); core.step(); ts[m].append(time.perf_counter() - t)
o, f = statistics.median(ts["piece"][5:]), statistics.median(ts["share"][5:])
print(f"{mode} batch {batch}: within a piece {o*1e3:.2f} ms, within the share {f*1e3:.2f} ms, ratio of medians {f/o:.3f}, median per-pair ratio {statistics.median(b/a for a,b in zip(ts['piece'][5:], ts['share'][5:])):.3f}")
