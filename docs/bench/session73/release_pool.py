"""Where an engine runs on a thread other than the one that loaded the model: that thread's
OpenMP pool (made by the loading) kept, or released first (omp_pause_resource_all on it), in
turns with the loading thread stepping itself. A ~2,000-token prompt's first token, and 64
decode steps of one stream after a 64-token prompt.

    python release_pool.py ROUNDS
"""

import ctypes
import os
import statistics
import sys
import threading
import time

import torch

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine

gomp = ctypes.CDLL(os.path.join(os.path.dirname(torch.__file__), "lib", "libgomp.so.1"))
rounds = int(sys.argv[1])
engine = InferenceEngine(model="smollm2", dtype="bfloat16", quantization="int8")
core = engine.new_core(kv_cache_memory=0.5, kv_cache_dtype="int8")
names = [
    "main",
    "thread, main's pool kept",
    "thread, main's pool released",
    "thread, main's pool released, its second prompt",
]
res = {(n, k): [] for n in names for k in ("prompt", "decode")}


def one(r, name):
    salt = names.index(name)
    prompt = [100 + (r * 7 + salt * 301 + i) % 3000 for i in range(2000)]
    s = time.perf_counter()
    core.add_request(
        f"{r}-{salt}-p", prompt, SamplingParams(max_tokens=1, temperature=0, ignore_eos=True)
    )
    while not any(o.finish_reason for o in core.step()):
        pass
    t_prompt = time.perf_counter() - s
    short = [100 + (r * 11 + salt * 37 + i) % 3000 for i in range(64)]
    core.add_request(
        f"{r}-{salt}-d", short, SamplingParams(max_tokens=66, temperature=0, ignore_eos=True)
    )
    core.step()
    core.step()
    s = time.perf_counter()
    for _ in range(64):
        core.step()
    t_decode = (time.perf_counter() - s) / 64
    while core.has_unfinished():
        core.step()
    if r:
        res[(name, "prompt")].append(t_prompt)
        res[(name, "decode")].append(t_decode)


for r in range(rounds + 1):
    one(r, names[0])
    t = threading.Thread(target=one, args=(r, names[1]))
    t.start()
    t.join()
    torch.randn(4_000_000).sum()  # main's pool, as the loading left it
    gomp.omp_pause_resource_all(1)

    def twice(r):
        one(r, names[2])
        one(r, names[3])

    t = threading.Thread(target=twice, args=(r,))
    t.start()
    t.join()
    torch.randn(4_000_000).sum()
for (n, k), v in res.items():
    v = sorted(v)
    print(
        f"int8+kv8 {n}, {k}: {1e3 * statistics.median(v):.2f} ms (q {1e3 * v[len(v) // 4]:.2f}-{1e3 * v[3 * len(v) // 4]:.2f})"
    )
