"""Eight ~2,000-token prompts at once, 32 tokens each: output tok/s and TTFT p50 with the long
prompt's chunk grown to `lone_prefill_tokens` (2,048) against not (0: every step within the
512-token budget), in turns in one engine.

    .venv/bin/python docs/bench/session69/eight_grow.py bf16|int8 ROUNDS
"""

import collections
import statistics
import sys
import time

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine

quant = sys.argv[1]
rounds = int(sys.argv[2])
kw = dict(quantization="int8") if quant == "int8" else {}
kv = dict(kv_cache_dtype="int8") if quant == "int8" else {}
engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
core = engine.new_core(kv_cache_memory=2.0, max_num_batched_tokens=512, **kv)
params = SamplingParams(max_tokens=32, temperature=0, ignore_eos=True)
rate, ttft, steps = collections.defaultdict(list), collections.defaultdict(list), {}
for r in range(rounds + 1):
    for ci, lone in enumerate((0, 2048)):
        core.scheduler.lone_prefill_tokens = lone
        s = time.perf_counter()
        first: dict[str, float] = {}
        for i in range(8):
            core.add_request(
                f"r{r}-{lone}-{i}",
                [100 + (r * 131 + ci * 977 + i * 17 + j) % 5000 for j in range(2000)],
                params,
            )
        done = n = 0
        while done < 8:
            outs = core.step()
            n += 1
            now = time.perf_counter() - s
            for o in outs:
                first.setdefault(o.request_id, now)
            done += sum(o.finish_reason is not None for o in outs)
        if r:
            rate[lone].append(256 / (time.perf_counter() - s))
            ttft[lone].append(statistics.median(first.values()) * 1000)
            steps[lone] = n


def q(v: list[float]) -> str:
    v = sorted(v)
    return f"{statistics.median(v):.1f} (q {v[len(v) // 4]:.1f}-{v[3 * len(v) // 4]:.1f})"


for lone in rate:
    print(
        f"{quant} lone_prefill_tokens {lone}: {q(rate[lone])} tok/s, TTFT p50 {q(ttft[lone])} ms, {steps[lone]} steps"
    )
