"""Session 34: each stage of a one-row decode step timed by a wrapper (median of 300 steps):
    PYTHONPATH=. python docs/bench/session34/step_parts.py int8"""
"""Where a one-stream step's time goes: wall time of each part, medians over 300 steps."""
import statistics, sys, time, functools
import torch
sys.path.insert(0, "benchmarks")
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
mode = sys.argv[1] if len(sys.argv) > 1 else "int8"
opts = {"quantization": "int8"} if mode.startswith("int8") else {"dtype": "bfloat16"}
kv = "int8" if mode == "int8+kv8" else "auto"
core = decoding_core(InferenceEngine(model="smollm2", **opts), 1, context=70, kv_cache_dtype=kv, max_new_tokens=500)
times = {}
def wrap(obj, name, label):
    f = getattr(obj, name)
    @functools.wraps(f)
    def g(*a, **k):
        t = time.perf_counter(); r = f(*a, **k); times.setdefault(label, []).append(time.perf_counter() - t); return r
    setattr(obj, name, g)
runner = core.runner if hasattr(core, "runner") else None
print(type(core).__name__, [a for a in vars(core)][:30])
r = core.runner
wrap(core, "step", "step")
wrap(core.scheduler, "schedule", "schedule")
wrap(r, "run", "run")
wrap(r, "prepare", "prepare")
wrap(r, "_forward", "forward(prepare+model)")
wrap(r.model, "compute_logits", "lm_head")
wrap(r, "sample", "sample")
wrap(core, "_process", "process")
wrap(core.scheduler, "on_computed", "on_computed")
st = r.decoder_stack
import roseinfer.backends.cpu as cpu
orig = cpu.CpuDecoderStack.for_step
for _ in range(20): core.step()
times.clear()
for _ in range(300): core.step()
for k, v in times.items():
    print(f"{k:28s} {1e3*statistics.median(v):7.3f} ms  (p25 {1e3*sorted(v)[len(v)//4]:.3f})")
