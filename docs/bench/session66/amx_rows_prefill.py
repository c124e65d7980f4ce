"""A 2,000-token prompt alone (one 2,000-row step, as --lone-prefill-tokens runs it) with the bf16
linears' AMX kernel up to AMX_ROWS rows (oneDNN beyond; SiLU·mul then after the matmul) at
1,024 (the default) and 2,048 rows, engines built in turns; ms from arrival to the first token,
median of ROUNDS per engine.

    .venv/bin/python docs/bench/session66/amx_rows_prefill.py 3 3
"""

import statistics
import sys
import time

from roseinfer import SamplingParams
from roseinfer.backends import cpu_linear
from roseinfer.engine import InferenceEngine

pairs, rounds = int(sys.argv[1]), int(sys.argv[2])
params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
for pair in range(pairs):
    for amx_rows in (1024, 2048):
        cpu_linear.AMX_ROWS = amx_rows
        engine = InferenceEngine(model="smollm2", dtype="bfloat16")
        core = engine.new_core(kv_cache_memory=0.5)
        times = []
        for r in range(rounds + 1):  # the first round warms up
            prompt = [100 + (pair * 31 + r * 7 + i) % 1000 for i in range(2000)]
            start = time.perf_counter()
            core.add_request(f"{amx_rows}-{r}", prompt, params)
            while not any(out.finished for out in core.step()):
                pass
            if r:
                times.append(time.perf_counter() - start)
        print(f"pair {pair + 1}, AMX_ROWS {amx_rows}: {statistics.median(times) * 1e3:.0f} ms "
              f"(rounds {', '.join(f'{t * 1e3:.0f}' for t in times)})", flush=True)  # fmt: skip
        del core, engine
