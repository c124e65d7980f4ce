"""What a one-row int8 step spends outside `model.forward` and the LM head, in turns: with the
real model (its 134 MB of weights streamed through the caches every step), with both replaced
by fixed outputs (the caches stay warm), and with those plus a 64 MB read before each step.

    PYTHONPATH=. .venv/bin/python docs/bench/session27/cold_python.py
"""
import sys, time, statistics, collections
sys.path.insert(0, "benchmarks")
import torch
from decoding import decoding_core
from roseinfer.engine import InferenceEngine
engine = InferenceEngine(model="smollm2", quantization="int8")
core = decoding_core(engine, 1, context=70)
times = collections.defaultdict(list)
r = core.runner
m = r.model
real_fwd, real_lm = m.forward, m.compute_logits
acc = {"f": 0.0}
def fwd(*a, **k):
    s = time.perf_counter(); out = real_fwd(*a, **k); acc["f"] += time.perf_counter() - s; return out
def lm(*a, **k):
    s = time.perf_counter(); out = real_lm(*a, **k); acc["f"] += time.perf_counter() - s; return out
m.forward, m.compute_logits = fwd, lm
h = torch.randn(1, 576).bfloat16(); lg = torch.randn(1, 49152).bfloat16()
def fake_fwd(*a, **k): return h
def fake_lm(x): return lg.clone()
big = torch.ones(64 * 1024 * 1024, dtype=torch.uint8)
for _ in range(20): core.step()
for _ in range(200):
    for mode in ("real", "fake", "fake+pollute"):
        if mode == "real":
            m.forward, m.compute_logits = fwd, lm
        else:
            m.forward, m.compute_logits = fake_fwd, fake_lm
        if mode == "fake+pollute":
            big.sum(dtype=torch.int32)
        acc["f"] = 0.0
        s = time.perf_counter(); core.step(); t = time.perf_counter() - s
        times[mode].append(t - acc["f"])
for k, v in times.items():
    print(f"{k:14s} step minus forward+lm head: {statistics.median(v)*1e3:.3f} ms")
