"""OpenMP parallel regions (GOMP_parallel calls, counted by regions_shim.c) in each step of a
~2,000-token int8 + int8 KV prompt and the decode steps after it.

    gcc -O2 -shared -fPIC docs/bench/session73/regions_shim.c -o /tmp/s73/shim/shim.so -ldl
    LD_PRELOAD=/tmp/s73/shim/shim.so .venv/bin/python docs/bench/session73/count_regions.py
"""

import ctypes

from roseinfer import SamplingParams
from roseinfer.engine import InferenceEngine

shim = ctypes.CDLL("/tmp/s73/shim/shim.so")
shim.shim_regions.restype = ctypes.c_ulonglong
engine = InferenceEngine(model="smollm2", dtype="bfloat16", quantization="int8")
core = engine.new_core(kv_cache_memory=0.5, kv_cache_dtype="int8")
for r in range(3):
    prompt = [100 + (r * 7 + i) % 3000 for i in range(2000)]
    c0 = shim.shim_regions()
    core.add_request(f"p{r}", prompt, SamplingParams(max_tokens=3, temperature=0, ignore_eos=True))
    steps = 0
    marks = []
    while core.has_unfinished():
        core.step()
        steps += 1
        marks.append(shim.shim_regions())
    print(
        f"round {r}: regions per step",
        [b - a for a, b in zip([c0] + marks[:-1], marks, strict=True)],
    )
