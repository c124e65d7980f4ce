"""SiLU·mul in the gate_up linear's epilogue (the decoder stack's `silu_mul` over the gated
packing) against the separate pass (the plain packing, `silu_and_mul`): two engines in one
process, one built with `gated_layout` forced off, their decoding cores stepped in turns.

    PYTHONPATH=. .venv/bin/python docs/bench/session29/gated_ab.py int8|bf16 BATCH STEPS [CONTEXT]
"""
import collections
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from decoding import decoding_core  # noqa: E402

import roseinfer.backends.cpu_linear as cpu_linear  # noqa: E402
from roseinfer.engine import InferenceEngine  # noqa: E402

mode, batch, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
context = int(sys.argv[4]) if len(sys.argv) > 4 else 70
opts = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
fused = InferenceEngine(model="smollm2", **opts)
gated_layout = cpu_linear.gated_layout
cpu_linear.gated_layout = lambda linear: False  # the second engine: the plain packing
separate = InferenceEngine(model="smollm2", **opts)
cpu_linear.gated_layout = gated_layout
cores = {
    "separate": decoding_core(separate, batch, context=context, max_new_tokens=2 * steps + 40),
    "fused": decoding_core(fused, batch, context=context, max_new_tokens=2 * steps + 40),
}
for core in cores.values():
    for _ in range(5):
        core.step()
times = collections.defaultdict(list)
for i in range(steps):
    for name in list(cores) if i % 2 else list(cores)[::-1]:
        start = time.perf_counter()
        cores[name].step()
        times[name].append(time.perf_counter() - start)
base = statistics.median(times["separate"])
got = statistics.median(times["fused"])
print(
    f"{mode} batch {batch} context {context}: separate {base * 1e3:.3f} ms, fused "
    f"{got * 1e3:.3f} ms ({(got / base - 1) * 100:+.1f} %)",
    flush=True,
)
