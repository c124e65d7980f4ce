"""The main thread's ~2,000-token prompts before and after another thread (kept alive, idle) ran
one parallel torch op, which gives it an OpenMP pool of its own; in turns with a thread that ran
a serial op only.

    .venv/bin/python docs/bench/session73/second_pool.py ROUNDS
"""

import statistics
import sys
import threading
import time

import torch

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine

rounds = int(sys.argv[1])
engine = InferenceEngine(model="smollm2", dtype="bfloat16", quantization="int8")
core = engine.new_core(kv_cache_memory=0.5, kv_cache_dtype="int8")
params = SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)


def one(r, salt):
    prompt = [100 + (r * 7 + salt * 301 + i) % 3000 for i in range(2000)]
    s = time.perf_counter()
    core.add_request(f"{r}-{salt}", prompt, params)
    while not any(o.finish_reason for o in core.step()):
        pass
    return time.perf_counter() - s


def idle_thread(parallel: bool) -> threading.Event:
    stop, ready = threading.Event(), threading.Event()

    def run():
        x = torch.randn(4_000_000) if parallel else torch.randn(100)
        (x * 2).sum()  # at::parallel_for over 4M elements: this thread's own OpenMP team
        ready.set()
        stop.wait()

    threading.Thread(target=run, daemon=True).start()
    ready.wait()
    return stop


res = {"alone": [], "idle thread, serial op": [], "idle thread, parallel op": []}
for r in range(rounds + 1):
    for name in res:
        stop = None
        if name != "alone":
            stop = idle_thread(name.endswith("parallel op"))
        t = [one(r, 10 * list(res).index(name) + i) for i in range(3)]
        if stop:
            stop.set()
            time.sleep(0.05)
        if r:
            res[name] += t
for k, v in res.items():
    v = sorted(v)
    print(
        f"int8+kv8 main thread, {k}: {1e3 * statistics.median(v):.1f} ms (q {1e3 * v[len(v) // 4]:.0f}-{1e3 * v[3 * len(v) // 4]:.0f})"
    )
