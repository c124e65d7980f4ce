import os, sys, time, statistics, random
from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[sys.argv[2]]
kv = sys.argv[3] if len(sys.argv) > 3 else "auto"
core = InferenceEngine(model="smollm2", **opts).new_core(kv_cache_dtype=kv)
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)
rng = random.Random(0)
n = [0]
def prefill():
    n[0] += 1
    core.add_request(str(n[0]), [rng.randrange(100, 40000) for _ in range(2000)], params)
    t = time.perf_counter()
    while True:
        outs = core.step()
        if any(o.finished for o in outs): return time.perf_counter() - t
ts = {"python": [], "c++": []}
for r in range(int(sys.argv[1])):
    for m in ts:
        os.environ.pop("PYWRITE", None)
        if m == "python": os.environ["PYWRITE"] = "1"
        ts[m].append(prefill())
for m in ts: print(sys.argv[2], kv, m, "median ms %.1f" % (1e3 * statistics.median(ts[m][1:])))
print("c++/python per round median %.3f" % statistics.median(b / a for a, b in zip(ts["python"][1:], ts["c++"][1:])))
