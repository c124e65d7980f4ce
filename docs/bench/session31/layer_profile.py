"""A one-row step's parts inside the decoder stack with `layer_profile.patch` applied (timers on
thread 0 around each call of a layer, summed over the 30 layers, read by `stack_prof()`), each
linear against its weights' read floor at the `sum` bandwidth measured before that step; medians
over STEPS steps, 70-token prompts.

    git worktree add /tmp/s31/prof 5c03629 && cd /tmp/s31/prof && git apply .../layer_profile.patch
    PYTHONPATH=. /work/main/.venv/bin/python .../layer_profile.py int8|bf16 STEPS
"""

import statistics
import sys
import time

import torch

sys.path.insert(0, "benchmarks")  # run from the worktree root
from decoding import decoding_core  # noqa: E402

from roseinfer.engine import InferenceEngine  # noqa: E402
from roseinfer.kernels import load_cpu_kernels  # noqa: E402

H, INTER, KV, L = 576, 1536, 192, 30
PARTS = ["input norm", "qkv", "attention", "o_proj", "post norm", "gate_up+silu", "down"]
WEIGHTS = {"qkv": (H + 2 * KV) * H, "o_proj": H * H, "gate_up+silu": 2 * INTER * H, "down": H * INTER}

mode, steps = sys.argv[1], int(sys.argv[2])
k = load_cpu_kernels()
options = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
core = decoding_core(InferenceEngine(model="smollm2", **options), 1, context=70,
                     max_new_tokens=steps + 40)  # fmt: skip
bytes_per_weight = 1 if mode == "int8" else 2
a = torch.ones(128 * 1024 * 1024)
for _ in range(10):
    core.step()
k.stack_prof()
rows: list[list[float]] = []
bws, totals = [], []
for _ in range(steps):
    t = time.perf_counter()
    a.sum()
    bws.append(a.numel() * 4 / (time.perf_counter() - t))
    t = time.perf_counter()
    core.step()
    totals.append(time.perf_counter() - t)
    rows.append(k.stack_prof()[: len(PARTS)])
bw = statistics.median(bws)
print(f"{mode}: sum {bw / 1e9:.1f} GB/s; step {statistics.median(totals) * 1e3:.3f} ms")
stack = 0.0
for i, part in enumerate(PARTS):
    ms = statistics.median(r[i] for r in rows) * 1e3
    stack += ms
    line = f"  {part:13s} {ms:6.3f} ms"
    if part in WEIGHTS:
        floor = L * WEIGHTS[part] * bytes_per_weight / bw * 1e3
        line += f"  floor {floor:6.3f} ms  ({ms / floor:.2f}x)"
    print(line)
print(f"  the parts' sum {stack:.3f} ms")
