"""A one-row int8 step's Python-side parts, each wrapped in perf_counter, medians of 500 steps
(then 400 with the runner's and scheduler's methods wrapped too).

    PYTHONPATH=. .venv/bin/python docs/bench/session28/in_step_ops.py
"""
import os
import sys, time, statistics, collections
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
core = decoding_core(InferenceEngine(model="smollm2", quantization="int8"), 1, context=70, max_new_tokens=700)
model = core.runner.model
spent = collections.defaultdict(list)
def wrap(obj, name, label):
    f = getattr(obj, name)
    def g(*a, **k):
        s = time.perf_counter(); r = f(*a, **k); spent[label].append(time.perf_counter() - s); return r
    setattr(obj, name, g)
wrap(model.model.embed_tokens, "forward", "embedding")
wrap(model.rotary, "forward", "rotary tables")
wrap(model, "compute_logits", "lm head")
wrap(model, "forward", "model.forward")
orig_gather = torch.Tensor.gather
sampler = core.runner.sampler if hasattr(core.runner, "sampler") else None
for _ in range(20): core.step()
spent.clear()
steps = []
for _ in range(500):
    s = time.perf_counter(); core.step(); steps.append(time.perf_counter() - s)
print(f"step {statistics.median(steps)*1e3:.3f} ms")
for k, v in spent.items(): print(f"  {k}: {statistics.median(v)*1e6:.1f} us")
# second phase: the sampling side
runner = core.runner
wrap(runner, "sample", "runner.sample")
wrap(runner.sampler, "_sample", "sampler._sample")
wrap(runner.sampler, "argmax", "sampler.argmax") if hasattr(runner.sampler, "argmax") else None
wrap(runner, "prepare", "runner.prepare") if hasattr(runner, "prepare") else None
wrap(runner, "_logits", "runner._logits") if hasattr(runner, "_logits") else None
wrap(core, "_process", "core._process") if hasattr(core, "_process") else None
wrap(core.scheduler, "schedule", "scheduler.schedule")
for _ in range(20): core.step()
spent.clear(); steps = []
for _ in range(400):
    s = time.perf_counter(); core.step(); steps.append(time.perf_counter() - s)
print(f"step {statistics.median(steps)*1e3:.3f} ms")
for k, v in spent.items(): print(f"  {k}: {statistics.median(v)*1e6:.1f} us")
