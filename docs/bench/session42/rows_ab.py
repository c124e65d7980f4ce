"""A lone 2,000-token prefill in one engine, the last layer for the read rows only (as now) and
for every row (read_rows patched to None), in turns: python rows_ab.py ROUNDS bf16|int8"""
import random, statistics, sys, time
import roseinfer.engine.model_runner as mr
from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[sys.argv[2]]
core = InferenceEngine(model="smollm2", **opts).new_core()
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)
rng = random.Random(0)
read_rows = mr.read_rows
times = {"read rows": [], "every row": []}
for r in range(int(sys.argv[1]) + 1):
    for name in times:
        mr.read_rows = read_rows if name == "read rows" else (lambda *a: None)
        core.add_request(f"{r}{name}", [rng.randrange(100, 40000) for _ in range(2000)], params)
        t = time.perf_counter()
        while core.has_unfinished():
            core.step()
        if r:
            times[name].append(time.perf_counter() - t)
for name, ts in times.items():
    print(f"{sys.argv[2]} {name}: median {1e3 * statistics.median(ts):.1f} ms "
          f"(quartiles {1e3 * statistics.quantiles(ts)[0]:.1f}-{1e3 * statistics.quantiles(ts)[2]:.1f})")
