"""Per-phase times of a one-row int8 step, cold (after a 512 MB sum) and warm (in a row)."""
import sys, time, statistics, functools
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine

mode = sys.argv[1] if len(sys.argv) > 1 else "int8"
opts = {"bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}[mode]
core = decoding_core(InferenceEngine(model="smollm2", **opts), 1, context=70, max_new_tokens=800)
runner = core.runner if hasattr(core, "runner") else None
if runner is None:
    for name in dir(core):
        v = getattr(core, name)
        if type(v).__name__ == "ModelRunner":
            runner = v
times = {}
def wrap(obj, name, label):
    f = getattr(obj, name)
    @functools.wraps(f)
    def g(*a, **k):
        t = time.perf_counter()
        try:
            return f(*a, **k)
        finally:
            times.setdefault(label, []).append(time.perf_counter() - t)
    setattr(obj, name, g)
wrap(runner, "prepare", "prepare")
wrap(runner.model, "forward", "model")
wrap(runner.model, "compute_logits", "lm_head")
wrap(runner, "_sample", "sample")
wrap(runner, "run", "run")
wrap(core, "step", "step")
stack = runner.decoder_stack
orig_for_step = type(stack).for_step
def for_step(step, kv):
    f = orig_for_step(stack, step, kv)
    if f is None: return f
    def g(*a):
        t = time.perf_counter()
        try: return f(*a)
        finally: times.setdefault("stack", []).append(time.perf_counter() - t)
    return g
object.__setattr__(stack, "for_step", for_step)
wrap(runner, "_forward", "_forward")
wrap(runner, "sample", "sample_outer")
wrap(runner.backend.attention, "prepare", "attn_prepare")
a = torch.ones(128 * 1024 * 1024)
for _ in range(20): core.step()
for k in times: times[k].clear()
cold = {}
warm = {}
for r in range(120):
    a.sum()
    before = {k: len(v) for k, v in times.items()}
    core.step()
    for k, v in times.items(): cold.setdefault(k, []).append(v[-1])
    core.step(); core.step()
    for k, v in times.items(): warm.setdefault(k, []).append(v[-1])
for label, d in (("cold", cold), ("warm", warm)):
    print(label, "  ".join(f"{k} {statistics.median(v)*1e3:.3f}" for k, v in d.items()))
