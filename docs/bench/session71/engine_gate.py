"""The engine's own 30 gate_up layers (SmolLM2, bf16 and int8 engines) on one 2,000-row x,
`silu_mul` in turns: the median of 10 rounds after 2. Against gate_bench.py's random weights.

    .venv/bin/python docs/bench/session71/engine_gate.py
"""

import statistics
import time

import torch

from roseinfer.engine import InferenceEngine

layers = {}
for quant in ("bf16", "int8"):
    kw = {"quantization": "int8"} if quant == "int8" else {}
    engine = InferenceEngine(model="smollm2", dtype="bfloat16", **kw)
    mods = [m for n, m in engine.model.named_modules() if n.endswith("gate_up_proj")]
    layers[quant] = mods
    print(quant, len(mods), type(mods[0]).__name__)
torch.manual_seed(0)
x = (torch.randn(2000, 576) * 0.5).bfloat16()
times: dict[str, list[float]] = {q: [] for q in layers}
for _ in range(12):
    for q, mods in layers.items():
        s = time.perf_counter()
        for m in mods:
            m.silu_mul(x)
        times[q].append(time.perf_counter() - s)
for q, v in times.items():
    v = sorted(v[2:])
    q1, q3 = 1e3 * v[len(v) // 4], 1e3 * v[3 * len(v) // 4]
    print(f"{q}: {1e3 * statistics.median(v):.1f} ms (q {q1:.1f}-{q3:.1f})")
