"""Session 40: a lone 2,000-token bf16 prefill through two cores of one engine in turns, token
budgets 512 and 2,048: PYTHONPATH=. .venv/bin/python docs/bench/session40/ttft_chunk.py N"""
import sys, time, statistics, random
from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine
eng = InferenceEngine(model="smollm2", dtype="bfloat16")
cores = {n: eng.new_core(max_num_batched_tokens=n) for n in (512, 2048)}
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)
rng = random.Random(0)
ts = {n: [] for n in cores}
for r in range(int(sys.argv[1]) + 1):
    for n, core in cores.items():
        core.add_request(str(r), [rng.randrange(100, 40000) for _ in range(2000)], params)
        t = time.perf_counter()
        while core.has_unfinished():
            core.step()
        ts[n].append(time.perf_counter() - t)
for n in cores: print(n, "median ms %.1f" % (1e3 * statistics.median(ts[n][1:])))
