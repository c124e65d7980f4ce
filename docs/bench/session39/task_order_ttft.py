import os, sys, time, statistics, random
from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine
import roseinfer; print(roseinfer.__file__)
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
modes = {"A": "0", "G": "2"}
ts = {m: [] for m in modes}
for r in range(int(sys.argv[1])):
    for m, v in modes.items():
        os.environ.pop("HM", None)
        if v != "0": os.environ["HM"] = v
        ts[m].append(prefill())
for m in modes: print(m, "median ms %.1f" % (1e3 * statistics.median(ts[m][1:])))
print("G/A per round median %.3f" % statistics.median(g / a for a, g in zip(ts["A"][1:], ts["G"][1:])))
