"""A ~2,000-token int8 + int8 KV prompt alone, stepped on the main thread (which loaded the model)
and on a new thread each round, in turns.

    .venv/bin/python docs/bench/session73/thread_step.py int8 ROUNDS
"""

import statistics
import sys
import threading
import time

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine

quant, rounds = sys.argv[1], int(sys.argv[2])
kw = dict(quantization="int8") if quant == "int8" else {}
kv = dict(kv_cache_dtype="int8") if quant == "int8" else {}
engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
core = engine.new_core(kv_cache_memory=0.5, **kv)
params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
res = {"main": [], "thread": []}


def one(r, name):
    prompt = [100 + (r * 7 + len(name) * 301 + i) % 3000 for i in range(2000)]
    s = time.perf_counter()
    core.add_request(f"{r}-{name}", prompt, params)
    while not any(o.finish_reason for o in core.step()):
        pass
    if r:
        res[name].append(time.perf_counter() - s)


for r in range(rounds + 1):
    one(r, "main")
    t = threading.Thread(target=one, args=(r, "thread"))
    t.start()
    t.join()
for k, v in res.items():
    v = sorted(v)
    print(
        f"{quant} {k}: {1e3 * statistics.median(v):.1f} ms (q {1e3 * v[len(v) // 4]:.0f}-{1e3 * v[3 * len(v) // 4]:.0f})"
    )
