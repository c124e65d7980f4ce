"""Where a one-row step goes: the median wall time of each stage of the engine's step (each
wrapped by monkeypatching), 200 steps, a 512 MB `sum` before each for the memory mood.

    PYTHONPATH=. .venv/bin/python docs/bench/session30/step_stages.py int8|bf16
"""
import sys, time, statistics, collections
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine

mode = sys.argv[1] if len(sys.argv) > 1 else "int8"
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
core = decoding_core(InferenceEngine(model="smollm2", **opts), 1, context=70, max_new_tokens=400)
acc = collections.defaultdict(list)

def wrap(obj, name, label):
    f = getattr(obj, name)
    def w(*a, **k):
        t = time.perf_counter(); r = f(*a, **k); acc[label].append(time.perf_counter() - t); return r
    object.__setattr__(obj, name, w)

r = core.runner
wrap(core.scheduler, "schedule", "schedule")
wrap(core, "_process", "process")
wrap(r, "prepare", "runner.prepare")
wrap(r.backend.attention, "prepare", "attention.prepare")
if r.decoder_stack is not None:
    wrap(r.decoder_stack, "for_step", "stack.for_step")
wrap(r.model, "compute_logits", "lm_head")
wrap(r.model, "forward", "model.forward")
wrap(r, "sample", "sample")
wrap(core.scheduler, "on_computed", "on_computed")
a = torch.ones(128 * 1024 * 1024)
for _ in range(20): core.step()
acc.clear(); steps = []; bws = []
for _ in range(200):
    t = time.perf_counter(); a.sum(); bws.append(a.numel() * 4 / (time.perf_counter() - t))
    t = time.perf_counter(); core.step(); steps.append(time.perf_counter() - t)
print(f"{mode}: bandwidth median {statistics.median(bws)/1e9:.1f} GB/s; step median {statistics.median(steps)*1e3:.3f} ms")
for k, v in acc.items():
    print(f"  {k:20s} {statistics.median(v)*1e6:8.1f} us  (x{len(v)/200:.0f})")
