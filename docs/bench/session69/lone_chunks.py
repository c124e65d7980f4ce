"""A ~2,000-token prompt alone, time to its first token with `lone_prefill_tokens` at each given
value (its chunks), in turns in one engine.

    .venv/bin/python docs/bench/session69/lone_chunks.py bf16|int8 ROUNDS 2048,1024,512
"""

import collections
import statistics
import sys
import time

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine

quant, rounds, values = sys.argv[1], int(sys.argv[2]), [int(v) for v in sys.argv[3].split(",")]
kw = dict(quantization="int8") if quant == "int8" else {}
kv = dict(kv_cache_dtype="int8") if quant == "int8" else {}
engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
core = engine.new_core(kv_cache_memory=0.5, **kv)
params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
res = collections.defaultdict(list)
for r in range(rounds + 1):
    for ci, v in enumerate(values):
        core.scheduler.lone_prefill_tokens = v
        prompt = [100 + (r * 7 + ci * 301 + i) % 3000 for i in range(2000)]
        s = time.perf_counter()
        core.add_request(f"{r}-{v}", prompt, params)
        while not any(o.finish_reason for o in core.step()):
            pass
        if r:
            res[v].append(time.perf_counter() - s)
for v, t in res.items():
    t = sorted(t)
    print(
        f"{quant} lone_prefill_tokens {v}: {1e3 * statistics.median(t):.1f} ms "
        f"(q {1e3 * t[len(t) // 4]:.0f}-{1e3 * t[3 * len(t) // 4]:.0f})"
    )
