"""Median decode step at a batch and context, through the engine's default path (the C++
decoder stack): `batch` sequences with `context`-token prompts, 5 warm-up steps, then `steps`
timed ones.

    PYTHONPATH=. .venv/bin/python docs/bench/session21/context_steps.py int8+kv8 1 2000 30
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from decoding import decoding_core  # noqa: E402

from roseinfer.engine import InferenceEngine  # noqa: E402

MODES = {
    "fp32": ({}, "auto"),
    "bf16": ({"dtype": "bfloat16"}, "auto"),
    "int8+kv8": ({"quantization": "int8"}, "int8"),
}
mode, batch, context, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
engine_args, kv_dtype = MODES[mode]
core = decoding_core(
    InferenceEngine(**engine_args),
    batch,
    context=context,
    max_new_tokens=steps + 10,
    kv_cache_dtype=kv_dtype,
)
for _ in range(5):
    core.step()
times = []
for _ in range(steps):
    start = time.perf_counter()
    core.step()
    times.append(time.perf_counter() - start)
step = statistics.median(times)
print(
    f"{mode} batch {batch} context {context}: median step {1e3 * step:.1f} ms "
    f"({batch / step:.0f} tok/s)",
    flush=True,
)
