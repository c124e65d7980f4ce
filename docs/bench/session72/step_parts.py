"""One int8 (or bf16) decode stream's step by parts, run in each tree (PYTHONPATH=TREE:TREE/benchmarks):
the whole `core.step()`, the runner's prepare, forward (`_forward`), logits (`_logits`) and
sampling (`sample`), each timed around its call; medians of STEPS steps in a row.

    PYTHONPATH=T:T/benchmarks .venv/bin/python docs/bench/session72/step_parts.py int8|bf16 STEPS
"""

import collections
import statistics
import sys
import time

from decoding import decoding_core

from roseinfer.engine import InferenceEngine
from roseinfer.engine.model_runner import ModelRunner

mode, steps = sys.argv[1], int(sys.argv[2])
kw = {"quantization": "int8"} if mode == "int8" else {}
times: dict[str, list[float]] = collections.defaultdict(list)


def timed(name: str):
    inner = getattr(ModelRunner, name)

    def wrapper(*a, **k):
        s = time.perf_counter()
        try:
            return inner(*a, **k)
        finally:
            times[name].append(time.perf_counter() - s)

    setattr(ModelRunner, name, wrapper)


for name in ("prepare", "_forward", "_logits", "sample"):
    timed(name)
engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
core = decoding_core(engine, 1, max_new_tokens=steps + 50)
times.clear()
for _ in range(steps):
    s = time.perf_counter()
    core.step()
    times["step"].append(time.perf_counter() - s)
print(" ".join(f"{n} {1e3 * statistics.median(t):.3f}" for n, t in times.items()))
