"""The embedding and rotary-row lookups the decoder stack now does itself (`take_rows`), against
the two PyTorch ops they replace: mode 0 runs those ops too (their results unused) before each
forward, mode 1 does not; the modes alternate step by step on one engine core.

    PYTHONPATH=. .venv/bin/python docs/bench/session28/lookups_ab.py int8|bf16 BATCH STEPS
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from decoding import decoding_core  # noqa: E402

from roseinfer.engine import InferenceEngine  # noqa: E402

mode, batch, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
options = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
core = decoding_core(
    InferenceEngine(model="smollm2", **options), batch, context=70, max_new_tokens=2 * steps + 40
)
model = core.runner.model
forward = model.forward
old = [False]


def forward_ab(input_ids, positions, ctx):
    if old[0]:
        x = model.model.embed_tokens(input_ids)
        model.rotary(positions, x.dtype)
    return forward(input_ids, positions, ctx)


model.forward = forward_ab
for _ in range(10):
    core.step()
times: dict[int, list[float]] = {0: [], 1: []}
for i in range(steps):
    for m in (0, 1) if i % 2 else (1, 0):
        old[0] = m == 0
        start = time.perf_counter()
        core.step()
        times[m].append(time.perf_counter() - start)
a, b = (statistics.median(times[m]) * 1e3 for m in (0, 1))
print(f"{mode} batch {batch}: mode 0 (the PyTorch lookups too) {a:.3f} ms, mode 1 {b:.3f} ms "
      f"({(b / a - 1) * 100:+.1f} %)")  # fmt: skip
