"""A ~2,000-token prompt alone (one grown step) in bf16 and in int8 + int8 KV, two engines in one
process, in turns: the time to its first token, and cProfile's own time of each built-in call
(the kernels) summed over the profiled rounds, per prompt.

    .venv/bin/python docs/bench/session70/lone_parts.py ROUNDS
"""

import collections
import cProfile
import pstats
import statistics
import sys
import time

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine

rounds = int(sys.argv[1])
cores = {}
for quant in ("bf16", "int8"):
    kw = dict(quantization="int8") if quant == "int8" else {}
    kv = dict(kv_cache_dtype="int8") if quant == "int8" else {}
    engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
    cores[quant] = engine.new_core(kv_cache_memory=0.5, **kv)
params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
times = collections.defaultdict(list)
own = {q: collections.Counter() for q in cores}
for r in range(rounds + 1):
    for qi, (quant, core) in enumerate(cores.items()):
        prompt = [100 + (r * 7 + qi * 301 + i) % 3000 for i in range(2000)]
        prof = cProfile.Profile() if r % 2 == 0 and r else None
        s = time.perf_counter()
        core.add_request(f"{r}", prompt, params)
        while True:
            if prof:
                prof.enable()
            outs = core.step()
            if prof:
                prof.disable()
            if any(o.finish_reason for o in outs):
                break
        dt = time.perf_counter() - s
        if prof:
            for k, v in pstats.Stats(prof).stats.items():
                own[quant][k[2]] += v[2]
        elif r:
            times[quant].append(dt)
for quant, t in times.items():
    t = sorted(t)
    print(
        f"{quant}: {1e3 * statistics.median(t):.1f} ms (q {1e3 * t[len(t) // 4]:.0f}-{1e3 * t[3 * len(t) // 4]:.0f}), unprofiled rounds {len(t)}"
    )
profiled = sum(1 for r in range(1, rounds + 1) if r % 2 == 0)
names = sorted(
    set(own["bf16"]) | set(own["int8"]), key=lambda n: -(own["bf16"][n] + own["int8"][n])
)
print(f"own time per prompt (ms), {profiled} profiled rounds each:  bf16  int8+kv8")
for n in names[:16]:
    print(f"  {1e3 * own['bf16'][n] / profiled:7.1f} {1e3 * own['int8'][n] / profiled:7.1f}  {n}")
