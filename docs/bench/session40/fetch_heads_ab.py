"""Session 40: the decode kernel's first task of a sequence's KV heads in a thread's run asking
for the next heads' rows of each block too (FETCH_HEADS set; a throwaway build reading it per
task) against each task asking for its own, two ways alternating step by step in one engine core:
    PYTHONPATH=. .venv/bin/python docs/bench/session40/fetch_heads_ab.py bf16|int8|int8+kv8 BATCH CONTEXT STEPS"""
import os
import statistics
import sys
import time

sys.path.insert(0, "benchmarks")
from decoding import decoding_core  # noqa: E402

from roseinfer.engine import InferenceEngine  # noqa: E402

mode, batch, context, steps = sys.argv[1], *(int(x) for x in sys.argv[2:5])
opts = {"bf16": ({"dtype": "bfloat16"}, "auto"), "int8": ({"quantization": "int8"}, "auto"),
        "int8+kv8": ({"quantization": "int8"}, "int8")}[mode]  # fmt: skip
core = decoding_core(InferenceEngine(model="smollm2", **opts[0]), batch, context=context,
                     kv_cache_dtype=opts[1], max_new_tokens=steps * 2 + 20)  # fmt: skip
times = {"own": [], "heads": []}
for _ in range(steps):
    for name in times:
        if name == "heads":
            os.environ["FETCH_HEADS"] = "1"
        else:
            os.environ.pop("FETCH_HEADS", None)
        start = time.perf_counter()
        core.step()
        times[name].append(time.perf_counter() - start)
o, h = statistics.median(times["own"]), statistics.median(times["heads"])
ratio = statistics.median(b / a for a, b in zip(times["own"], times["heads"]))
print(f"{mode} batch {batch} context {context}: own {o * 1e3:.2f} ms, next heads too {h * 1e3:.2f} ms, "
      f"median per-pair ratio {ratio:.3f}", flush=True)  # fmt: skip
