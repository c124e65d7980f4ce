"""One process of an A/B (the kernels' choice set by the environment): a 2,000-token prompt's
prefill (one token out; default chunking) and batch-32 decode steps, bf16, SmolLM2."""
import statistics, sys, time
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.config import SamplingParams
from roseinfer.engine import InferenceEngine

engine = InferenceEngine(model="smollm2")
core = engine.new_core(kv_cache_memory=0.5)
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)
times = []
for n in range(3):
    core.add_request(f"p{n}", [100 + (n * 7919 + 31 * j) % 40000 for j in range(2000)], params)
    t = time.perf_counter()
    while core.has_unfinished():
        core.step()
    times.append(time.perf_counter() - t)
print(f"prefill 2000: {1000 * statistics.median(times[1:]):.0f} ms ({', '.join(f'{1000*x:.0f}' for x in times)})")
for batch in (1, 8, 32):
    dcore = decoding_core(engine, batch)
    steps = []
    for _ in range(12):
        t = time.perf_counter()
        dcore.step()
        steps.append(time.perf_counter() - t)
    print(f"batch {batch}: step {1000 * statistics.median(steps[2:]):.2f} ms")
    del dcore
