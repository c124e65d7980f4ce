"""Session 40: a lone 2,000-token prefill in the engine, the median of N after a warm-up one:
    PYTHONPATH=<tree> .venv/bin/python docs/bench/session40/ttft.py N bf16|int8 [auto|int8]"""
import sys, time, statistics, random
from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[sys.argv[2]]
kv = sys.argv[3] if len(sys.argv) > 3 else "auto"
core = InferenceEngine(model="smollm2", **opts).new_core(kv_cache_dtype=kv)
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)
rng = random.Random(0)
ts = []
for r in range(int(sys.argv[1]) + 1):
    core.add_request(str(r), [rng.randrange(100, 40000) for _ in range(2000)], params)
    t = time.perf_counter()
    while core.has_unfinished():
        core.step()
    ts.append(time.perf_counter() - t)
print(sys.argv[2], kv, "median ms %.1f" % (1e3 * statistics.median(ts[1:])))
