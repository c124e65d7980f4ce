import sys, time, statistics, random
from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine
core = InferenceEngine(model="smollm2", dtype="bfloat16").new_core()
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)
rng = random.Random(0)
ts = []
print("loaded", flush=True)
time.sleep(2)
for r in range(int(sys.argv[1]) + 1):
    core.add_request(str(r), [rng.randrange(100, 40000) for _ in range(2000)], params)
    t = time.perf_counter()
    while core.has_unfinished():
        core.step()
    ts.append(time.perf_counter() - t)
print("median ms %.1f" % (1e3 * statistics.median(ts[1:])), [round(x*1e3) for x in ts])
