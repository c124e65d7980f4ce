"""Issue 22's `long-prompt-8` preset in one process: sixteen ~2,000-token prompts, eight in
flight (a new one as one finishes), 32 greedy tokens each; output tok/s, and the time by kernel
call (cProfile's own time of each built-in) and by kind of step.

    .venv/bin/python docs/bench/session69/sixteen_parts.py bf16|int8 [LONE_PREFILL_TOKENS]
"""

import collections
import cProfile
import itertools
import pstats
import sys
import time

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine

quant = sys.argv[1]
lone = int(sys.argv[2]) if len(sys.argv) > 2 else 2048
kw = dict(quantization="int8") if quant == "int8" else {}
kv = dict(kv_cache_dtype="int8") if quant == "int8" else {}
engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
core = engine.new_core(kv_cache_memory=2.0, lone_prefill_tokens=lone, **kv)
params = SamplingParams(max_tokens=32, temperature=0, ignore_eos=True)
runs = itertools.count()


def run(tag: str, profile: cProfile.Profile | None = None) -> tuple[float, dict[str, list[float]]]:
    kinds: dict[str, list[float]] = collections.defaultdict(list)
    base = 100 + 6000 * next(runs)  # each run's own tokens: none hits an earlier run's cache
    sent = done = 0
    s = time.perf_counter()
    while done < 16:
        while sent < 16 and sent - done < 8:
            prompt = [base + (sent * 17 + j) % 5000 for j in range(2000)]
            core.add_request(f"{tag}-{sent}", prompt, params)
            sent += 1
        t = time.perf_counter()
        if profile:
            profile.enable()
        outs = core.step()
        if profile:
            profile.disable()
        dt = time.perf_counter() - t
        kinds["step"].append(dt)
        done += sum(o.finish_reason is not None for o in outs)
    return 512 / (time.perf_counter() - s), kinds


run("warm")
rates = [run(f"r{i}")[0] for i in range(2)]
print(f"{quant} lone_prefill_tokens {lone}: {max(rates):.1f} / {min(rates):.1f} tok/s")
prof = cProfile.Profile()
rate, kinds = run("prof", prof)
steps = sorted(kinds["step"])
print(
    f"profiled run: {rate:.1f} tok/s, {len(steps)} steps, {sum(steps):.2f} s; steps over 100 ms: "
    f"{sum(1 for x in steps if x > 0.1)} ({sum(x for x in steps if x > 0.1):.2f} s), the rest "
    f"{sum(x for x in steps if x <= 0.1):.2f} s"
)
st = pstats.Stats(prof)
rows = sorted(((v[2], k[2]) for k, v in st.stats.items()), reverse=True)[:14]
for t, name in rows:
    print(f"  {t:6.2f} s  {name}")
