"""A decode step's parts inside the C++ decoder stack, with `stack_profile.patch` applied (timers
around each kernel call of `DecodeStack::forward`, summed over calls, read by `stack_prof()`):
norms, linears (the 120, not the LM head), the q/k/v views, rotary, attention, SiLU·mul; and the
step and `model.forward` (the stack plus the embedding and rotary tables) around them.

    git apply docs/bench/session27/stack_profile.patch   # in a scratch worktree
    PYTHONPATH=. .venv/bin/python docs/bench/session27/stack_profile.py BATCH int8|bf16
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from decoding import decoding_core  # noqa: E402

from roseinfer.engine import InferenceEngine  # noqa: E402
from roseinfer.kernels import load_cpu_kernels  # noqa: E402

PARTS = ["norms", "linears", "q/k/v views", "rotary", "attention", "silu*mul"]


def main() -> None:
    batch, mode = int(sys.argv[1]), sys.argv[2]
    k = load_cpu_kernels()
    options = {"quantization": "int8"} if mode == "int8" else {"dtype": "bfloat16"}
    core = decoding_core(InferenceEngine(model="smollm2", **options), batch, context=70)
    model = core.runner.model
    spent = {"forward": 0.0}
    forward = model.forward

    def timed(*args, **kwargs):
        start = time.perf_counter()
        out = forward(*args, **kwargs)
        spent["forward"] += time.perf_counter() - start
        return out

    model.forward = timed
    for _ in range(10):
        core.step()
    k.stack_prof()
    spent["forward"] = 0.0
    n = 100
    start = time.perf_counter()
    for _ in range(n):
        core.step()
    step = (time.perf_counter() - start) / n * 1e3
    parts = [t / n * 1e3 for t in k.stack_prof()]
    print(f"batch {batch} {mode}: step {step:.3f} ms, model.forward {spent['forward'] / n * 1e3:.3f}"
          " ms; in the stack: " + ", ".join(f"{p} {t:.3f}" for p, t in zip(PARTS, parts))
          + f" (sum {sum(parts):.3f})", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
