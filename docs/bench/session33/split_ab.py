"""One stream's decode step with the decode attention's key split on and off, in turns step by
step in one engine (the same process, the same kernels; `set_split_min`, an experiment-only
binding), at several context lengths: median step per setting and the median of the per-pair
ratios (split / whole).

    git apply docs/bench/session33/split_min_binding.patch   # then the kernels rebuild:
    PYTHONPATH=. .venv/bin/python docs/bench/session33/split_ab.py [bf16|int8+kv8] [contexts]
"""

import statistics
import sys
import time

sys.path.insert(0, "benchmarks")
from decoding import decoding_core  # noqa: E402

from roseinfer.engine import InferenceEngine  # noqa: E402
from roseinfer.kernels import load_cpu_kernels  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else "bf16"
contexts = [
    int(c) for c in (sys.argv[2] if len(sys.argv) > 2 else "128,256,512,1000,2000").split(",")
]
kernels = load_cpu_kernels()
opts, kv = ({"dtype": "bfloat16"}, "auto") if mode == "bf16" else ({"quantization": "int8"}, "int8")
engine = InferenceEngine(model="smollm2", **opts)
STEPS = 200
for context in contexts:
    core = decoding_core(
        engine, 1, context=context, kv_cache_dtype=kv, max_new_tokens=2 * STEPS + 20
    )
    for _ in range(10):
        core.step()
    times: dict[str, list[float]] = {"split": [], "whole": []}
    for i in range(STEPS):
        which = "split" if i % 2 == 0 else "whole"
        kernels.set_split_min(1 if which == "split" else 1 << 40)
        core.step()  # untimed: the first step after the switch
        start = time.perf_counter()
        core.step()
        times[which].append(time.perf_counter() - start)
    ratios = [a / b for a, b in zip(times["split"], times["whole"], strict=True)]
    q = statistics.quantiles(ratios, n=4)
    print(
        f"{mode} context {context}: split {1e3 * statistics.median(times['split']):.2f} ms, "
        f"whole {1e3 * statistics.median(times['whole']):.2f} ms, split / whole "
        f"{statistics.median(ratios):.3f} (quartiles {q[0]:.3f}-{q[2]:.3f})",
        flush=True,
    )
    del core
