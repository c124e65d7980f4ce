"""A/B of the weight streams' prefetch hint, prefetcht1 (shipped) against prefetchnta (mode 1),
with `nta_ab.patch` applied: int8 and bf16 engines at batch B, the hints in turns step by step;
the step, `model.forward` + LM head ("model") and the rest.

    PYTHONPATH=. .venv/bin/python docs/bench/session27/nta_ab.py [BATCH]
"""
import sys, time, statistics, collections
import os
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
from roseinfer.kernels import load_cpu_kernels
k = load_cpu_kernels()
B = int(sys.argv[1]) if len(sys.argv) > 1 else 1
STEPS = int(sys.argv[2]) if len(sys.argv) > 2 else 150
cores = {}
for name, opts in (("int8", {"quantization": "int8"}), ("bf16", {"dtype": "bfloat16"})):
    engine = InferenceEngine(model="smollm2", **opts)
    cores[name] = decoding_core(engine, B, context=70, max_new_tokens=STEPS * 2 + 40)
fwd_t = {}
for name, core in cores.items():
    m = core.runner.model
    def wrapf(fn, name=name):
        def t(*a, **kw):
            s = time.perf_counter(); r = fn(*a, **kw); fwd_t[name] = fwd_t.get(name, 0) + time.perf_counter() - s; return r
        return t
    m.forward = wrapf(m.forward); m.compute_logits = wrapf(m.compute_logits)
times = collections.defaultdict(list)
for i in range(STEPS + 10):
    for name, core in cores.items():
        for mode in ((0, 1) if i % 2 else (1, 0)):
            k.set_weight_prefetch_mode(mode)
            fwd_t[name] = 0.0
            s = time.perf_counter(); core.step(); t = time.perf_counter() - s
            if i >= 10:
                times[(name, mode, "step")].append(t)
                times[(name, mode, "model")].append(fwd_t[name])
                times[(name, mode, "rest")].append(t - fwd_t[name])
for name in cores:
    for part in ("step", "model", "rest"):
        a, b = (statistics.median(times[(name, m, part)]) * 1e3 for m in (0, 1))
        print(f"batch {B} {name:5s} {part:6s} t1 {a:.3f} ms  nta {b:.3f} ms  ({(b/a-1)*100:+.1f} %)")
