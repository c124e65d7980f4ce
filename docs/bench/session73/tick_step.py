"""A ~2,000-token prompt alone in-process, with a second Python thread that wakes every
TICK seconds (as uvicorn's main loop does every 0.1 s) on and off, in turns.

    .venv/bin/python docs/bench/session73/tick_step.py int8 ROUNDS TICK
"""

import asyncio
import statistics
import sys
import threading
import time

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine

quant, rounds, tick = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
kw = dict(quantization="int8") if quant == "int8" else {}
kv = dict(kv_cache_dtype="int8") if quant == "int8" else {}
engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
core = engine.new_core(kv_cache_memory=0.5, **kv)
params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
ticking = threading.Event()


async def loop():
    while True:
        await asyncio.sleep(tick if ticking.is_set() else 0.5)


threading.Thread(target=lambda: asyncio.run(loop()), daemon=True).start()
res = {"quiet": [], "ticking": []}
for r in range(rounds + 1):
    for name in res:
        (ticking.set if name == "ticking" else ticking.clear)()
        time.sleep(0.6)
        prompt = [100 + (r * 7 + len(name) * 301 + i) % 3000 for i in range(2000)]
        s = time.perf_counter()
        core.add_request(f"{r}-{name}", prompt, params)
        while not any(o.finish_reason for o in core.step()):
            pass
        if r:
            res[name].append(time.perf_counter() - s)
for k, v in res.items():
    v = sorted(v)
    print(
        f"{quant} tick {tick} {k}: {1e3 * statistics.median(v):.1f} ms (q {1e3 * v[len(v) // 4]:.0f}-{1e3 * v[3 * len(v) // 4]:.0f})"
    )
