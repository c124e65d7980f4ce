"""A one-row int8 step's sampling and index-tensor parts, each wrapped in perf_counter.

    PYTHONPATH=. .venv/bin/python docs/bench/session28/in_step_sampling.py
"""
import os
import sys, time, statistics, collections
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
import roseinfer.layers.sampler as S
core = decoding_core(InferenceEngine(model="smollm2", quantization="int8"), 1, context=70, max_new_tokens=700)
spent = collections.defaultdict(list)
def timed(label, f):
    def g(*a, **k):
        s = time.perf_counter(); r = f(*a, **k); spent[label].append(time.perf_counter() - s); return r
    return g
runner = core.runner
smp = runner.sampler
runner.sample = timed("runner.sample", runner.sample)
runner._sample = timed("runner._sample", runner._sample)
S.Sampler.__call__ = timed("Sampler.__call__ (decorated)", S.Sampler.__call__)
smp._mask = timed("sampler._mask", smp._mask)
smp._sample = timed("sampler._sample", smp._sample)
smp.argmax = timed("sampler.argmax", smp.argmax)
S._not_finite = timed("_not_finite", S._not_finite)
g = torch.Tensor.gather
torch.Tensor.gather = timed("Tensor.gather", g)
tl = torch.Tensor.tolist
torch.Tensor.tolist = timed("Tensor.tolist", tl)
runner.prepare = timed("runner.prepare", runner.prepare)
att = runner.backend.attention
att.prepare = timed("attention.prepare", att.prepare)
for _ in range(20): core.step()
spent.clear(); steps = []
for _ in range(400):
    s = time.perf_counter(); core.step(); steps.append(time.perf_counter() - s)
print(f"step {statistics.median(steps)*1e3:.3f} ms")
for k, v in spent.items(): print(f"  {k}: {statistics.median(v)*1e6:.1f} us x{len(v)/400:.0f}")
