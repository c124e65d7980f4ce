"""bf16 decode steps on an AMX CPU with the first rows on `dpbf16_linear` (a third copy of the
weights, `DPBF16_ROWS_ON_AMX`) against `amx_linear` at every row count: two engines in one
process, their steps in turns (`interleaved_step_medians`), at each batch size of BATCHES,
ROUNDS times. Prints each round's median step per engine and B / A - 1.

    .venv/bin/python docs/bench/session65/few_rows_ab.py 1,2,3,4,8 3 [LIMIT]
"""

import sys

sys.path.insert(0, "benchmarks")
from decoding import decoding_core, interleaved_step_medians  # noqa: E402

from roseinfer.backends import cpu_linear  # noqa: E402
from roseinfer.engine import InferenceEngine  # noqa: E402

limit = int(sys.argv[3]) if len(sys.argv) > 3 else 8
engines = {}
for name, rows in (("amx", 0), ("dpbf16", limit)):
    cpu_linear.DPBF16_ROWS_ON_AMX = rows
    engines[name] = InferenceEngine(model="smollm2", dtype="bfloat16")
for batch in [int(b) for b in sys.argv[1].split(",")]:
    cores = {name: decoding_core(engine, batch) for name, engine in engines.items()}
    for _ in range(int(sys.argv[2])):
        t = interleaved_step_medians(cores, 40)
        print(
            f"batch {batch}: amx {t['amx'] * 1e3:.2f} ms, dpbf16 {t['dpbf16'] * 1e3:.2f} ms, "
            f"dpbf16/amx - 1 = {t['dpbf16'] / t['amx'] - 1:+.1%}",
            flush=True,
        )
