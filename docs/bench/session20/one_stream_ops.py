"""One stream's decode steps, through the C++ decoder stack, for `one_stream_ops.sh`: `rounds`
fresh 70-token prompts, each decoding 10 warm-up steps then `steps` timed ones; prints the median
step. With `decode_stack_timers.patch` applied, the stack prints its per-op split every 200 calls.

    PYTHONPATH=. .venv/bin/python docs/bench/session20/one_stream_ops.py int8 100 4
"""

import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "benchmarks"))
from decoding import decoding_core  # noqa: E402

from roseinfer.engine import InferenceEngine  # noqa: E402

MODES = {"fp32": {}, "bf16": {"dtype": "bfloat16"}, "int8": {"quantization": "int8"}}
mode, steps = sys.argv[1], int(sys.argv[2])
rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 1
engine = InferenceEngine(**MODES[mode])
times = []
for _ in range(rounds):
    core = decoding_core(engine, 1, max_new_tokens=steps + 50)
    for _ in range(10):
        core.step()
    for _ in range(steps):
        start = time.perf_counter()
        core.step()
        times.append(time.perf_counter() - start)
    del core
print(f"{mode}: median step {1e3 * statistics.median(times):.2f} ms", flush=True)
