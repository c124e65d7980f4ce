"""Session 40: a one-row int8 step's parts (session 34's step_parts.py timers) in the host's
fast-memory mood: polls the `sum` rate every 2 s for up to MINUTES, and in each poll where it
reads at least GBPS, times 100 steps (60 such batches at most) with their `sum` rounds in between; prints each such batch.
    PYTHONPATH=. .venv/bin/python docs/bench/session40/fast_mood_parts.py [MINUTES] [GBPS]"""
import functools
import statistics
import sys
import time

import torch

sys.path.insert(0, "benchmarks")
from decoding import decoding_core  # noqa: E402

from roseinfer.engine import InferenceEngine  # noqa: E402

minutes = float(sys.argv[1]) if len(sys.argv) > 1 else 10
fast = float(sys.argv[2]) if len(sys.argv) > 2 else 62
core = decoding_core(InferenceEngine(model="smollm2", quantization="int8"), 1, context=70,
                     max_new_tokens=8000)  # fmt: skip
times: dict[str, list[float]] = {}


def wrap(obj, name, label):
    f = getattr(obj, name)

    @functools.wraps(f)
    def g(*a, **k):
        t = time.perf_counter()
        r = f(*a, **k)
        times.setdefault(label, []).append(time.perf_counter() - t)
        return r

    setattr(obj, name, g)


r = core.runner
wrap(core, "step", "step")
wrap(r, "_forward", "forward (the stack)")
wrap(r.model, "compute_logits", "LM head")
wrap(r, "sample", "sample")
a = torch.ones(128 * 1024 * 1024)


def rate() -> float:
    t = time.perf_counter()
    a.sum()
    return a.numel() * 4 / (time.perf_counter() - t) / 1e9


for _ in range(20):
    core.step()
end = time.time() + 60 * minutes
batches = 0
while time.time() < end and batches < 60:  # 8,000 tokens: 60 batches of 100 steps and the warm-up
    if rate() < fast:
        time.sleep(2)
        continue
    batches += 1
    times.clear()
    rates = []
    for _ in range(100):
        rates.append(rate())
        core.step()
    print(f"{time.strftime('%H:%M:%S', time.gmtime())} sum median {statistics.median(rates):.1f} GB/s: "
          + ", ".join(f"{k} {1e3 * statistics.median(v):.3f} ms" for k, v in times.items()),
          flush=True)  # fmt: skip
    time.sleep(5)
