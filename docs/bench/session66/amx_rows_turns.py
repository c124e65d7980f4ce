"""A 2,000-token prompt alone (one 2,000-row step: --lone-prefill-tokens' default) with the bf16
linears on the AMX kernel up to 1,024 rows (then oneDNN, SiLU·mul after it) or up to 4,096, in
turns in one engine (each `KernelPackedLinear`'s `kernel_rows` set between rounds); ms from
arrival to the first token, medians of ROUNDS turns.

    .venv/bin/python docs/bench/session66/amx_rows_turns.py 10
"""

import statistics
import sys
import time

from roseinfer import SamplingParams
from roseinfer.backends.cpu_linear import KernelPackedLinear
from roseinfer.engine import InferenceEngine

rounds = int(sys.argv[1])
engine = InferenceEngine(model="smollm2", dtype="bfloat16")
core = engine.new_core(kv_cache_memory=0.5)
layers = [m for m in engine.model.modules() if isinstance(m, KernelPackedLinear)]
params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
times: dict[int, list[float]] = {1024: [], 4096: []}
for r in range(rounds + 1):  # the first round warms up
    for rows in times:
        for layer in layers:
            layer.kernel_rows = rows
        prompt = [100 + (r * 7 + rows + i) % 1000 for i in range(2000)]  # no prefix-cache hit
        start = time.perf_counter()
        core.add_request(f"{rows}-{r}", prompt, params)
        while not any(out.finished for out in core.step()):
            pass
        if r:
            times[rows].append(time.perf_counter() - start)
for rows, ts in times.items():
    print(f"AMX kernel up to {rows} rows: median {statistics.median(ts) * 1e3:.0f} ms "
          f"(rounds {', '.join(f'{t * 1e3:.0f}' for t in ts)})")  # fmt: skip
