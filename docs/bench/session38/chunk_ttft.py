"""Session 38: a lone ~2,000-token prompt's prefill (bf16) with the default 512-token chunks and with
2,048 (one chunk), the two engines in turns, 7 measured rounds:
    PYTHONPATH=. .venv/bin/python docs/bench/session38/chunk_ttft.py"""
import sys, time, statistics
from roseinfer.config import SamplingParams
from roseinfer.engine import InferenceEngine
eng = InferenceEngine(model="smollm2", dtype="bfloat16")
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)
cores = {c: eng.new_core(kv_cache_memory=1.0, max_num_batched_tokens=c) for c in (512, 2048)}
res = {c: [] for c in cores}
for r in range(8):
    for c, core in cores.items():
        core.add_request(f"{c}-{r}", [100 + (r * 7919 + c + 31 * j) % 40000 for j in range(2000)], params)
        s = time.perf_counter()
        while core.has_unfinished():
            core.step()
        if r: res[c].append(time.perf_counter() - s)
for c, v in res.items():
    print(f"max_num_batched_tokens {c}: 2,000-token prefill median {1e3*statistics.median(v):.0f} ms ({', '.join(f'{1e3*x:.0f}' for x in v)})")
