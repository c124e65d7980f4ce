"""One prefill step of S prompts of L tokens (S*L rows), modules path (limit 0) vs per-token stack path: wall time, and cProfile by call for the modules path."""
import cProfile, pstats, sys, time
import roseinfer.backends.cpu_attention as ca
from roseinfer.config import SamplingParams
from roseinfer.engine import InferenceEngine

S, L = int(sys.argv[1]), int(sys.argv[2])
kw = {"quantization": "int8", "kv_cache_dtype": "int8"} if "int8" in sys.argv[3:] else {}
core = InferenceEngine(model="smollm2", **kw).new_core(kv_cache_memory=1.0, max_num_batched_tokens=max(512, S * L))
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)
n = 0
def one(lim, prof=None):
    global n
    ca.PER_TOKEN_MAX_KEYS = lim
    for s in range(S):
        n += 1
        core.add_request(str(n), [100 + (n * 7919 + 31 * j) % 40000 for j in range(L)], params)
    if prof: prof.enable()
    t = time.perf_counter()
    steps = 0
    while core.has_unfinished():
        core.step(); steps += 1
    dt = time.perf_counter() - t
    if prof: prof.disable()
    return dt, steps
for lim in (0, 10**9): one(lim)
for r in range(3):
    for lim in (0, 10**9):
        dt, steps = one(lim)
        print(f"limit {lim}: {dt*1000:.1f} ms in {steps} steps")
prof = cProfile.Profile()
one(0, prof)
stats = pstats.Stats(prof); total = stats.total_tt
rows = sorted(stats.stats.items(), key=lambda kv: -kv[1][2])
print(f"modules path: {total*1000:.0f} ms in all")
for (file, line, name), (_, calls, own, *_) in rows[:14]:
    where = name if file == "~" else f"{file.split('roseinfer/')[-1]}:{line} {name}"
    print(f"  {own*1000:7.1f} ms {own/total:6.1%}  {calls:6d} calls  {where}")
