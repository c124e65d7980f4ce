"""Decode steps of `--quantization int8` at a few rows, with the VNNI copy of session 35
(`VNNI_ROWS_ON_AMX`, as the engine builds it now) and without it (the limit set to 0 while that
engine is built: every row through the CPU's own int8 kernel, `amx_int8_linear` on AMX CPUs).
Both engines step in turns in one process, so both see the same memory; per batch size, each
one's median step and the median of the per-pair ratios (with / without).

    PYTHONPATH=. python3 docs/bench/session35/rows_ab.py MODEL [BATCHES] [STEPS]
"""

import statistics
import sys
import time

sys.path.insert(0, "benchmarks")
from decoding import decoding_core  # noqa: E402

from roseinfer.backends import cpu_linear  # noqa: E402
from roseinfer.engine import InferenceEngine  # noqa: E402

model = sys.argv[1]
batches = [int(b) for b in (sys.argv[2] if len(sys.argv) > 2 else "1,4,8,12").split(",")]
steps = int(sys.argv[3]) if len(sys.argv) > 3 else 60
limit = cpu_linear.VNNI_ROWS_ON_AMX
engines = {}
for name, rows in (("with the VNNI copy", limit), ("without", 0)):
    cpu_linear.VNNI_ROWS_ON_AMX = rows
    engines[name] = InferenceEngine(model=model, quantization="int8")
cpu_linear.VNNI_ROWS_ON_AMX = limit
print(f"VNNI_ROWS_ON_AMX = {limit}")
for batch in batches:
    cores = {
        name: decoding_core(engine, batch, max_new_tokens=steps + 20)
        for name, engine in engines.items()
    }
    times: dict[str, list[float]] = {name: [] for name in cores}
    for i in range(steps + 5):
        for name, core in cores.items():
            start = time.perf_counter()
            core.step()
            if i >= 5:
                times[name].append((time.perf_counter() - start) * 1e3)
    ratio = statistics.median(a / b for a, b in zip(*times.values(), strict=True))
    print(f"batch {batch}: " + ", ".join(
        f"{name} {statistics.median(t):.2f} ms" for name, t in times.items()
    ) + f"; with / without {ratio:.3f}", flush=True)  # fmt: skip
