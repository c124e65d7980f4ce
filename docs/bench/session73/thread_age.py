"""A new thread each round runs K ~2,000-token int8 + int8 KV prompts in a row, the main thread
(which loaded the model, and keeps its OpenMP pool) one a round: is a thread slow only at first?

    .venv/bin/python docs/bench/session73/thread_age.py ROUNDS K
"""

import collections
import statistics
import sys
import threading
import time

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine

rounds, k = int(sys.argv[1]), int(sys.argv[2])
engine = InferenceEngine(model="smollm2", dtype="bfloat16", quantization="int8")
core = engine.new_core(kv_cache_memory=0.5, kv_cache_dtype="int8")
params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
res = collections.defaultdict(list)


def one(r, name, salt):
    prompt = [100 + (r * 7 + salt * 301 + i) % 3000 for i in range(2000)]
    s = time.perf_counter()
    core.add_request(f"{r}-{salt}", prompt, params)
    while not any(o.finish_reason for o in core.step()):
        pass
    if r:
        res[name].append(time.perf_counter() - s)


def fresh(r):
    for i in range(k):
        one(r, f"fresh thread, prompt {i + 1}", i + 1)


for r in range(rounds + 1):
    one(r, "main", 0)
    t = threading.Thread(target=fresh, args=(r,))
    t.start()
    t.join()
for name, v in res.items():
    v = sorted(v)
    print(
        f"int8+kv8 {name}: {1e3 * statistics.median(v):.1f} ms (q {1e3 * v[len(v) // 4]:.0f}-{1e3 * v[3 * len(v) // 4]:.0f})"
    )
