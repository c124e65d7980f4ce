"""Time to first token of one ~2,000-token prompt, offline (four 512-token prefill chunks, then
the first token), with the chunks after the first attended through SDPA over their gathered
blocks (the shipped routing: only chunks of at most 32 tokens take the prefill kernel) or
through the prefill kernel reading the blocks in place (every chunk), in turns, each prompt new.

    PYTHONPATH=. .venv/bin/python docs/bench/session16/prefill_routing.py [REPS] [MODES]

Run it in a checkout of b7066b5: the next commit sends every chunk to the kernel and drops the
limit this script switches.
"""

import statistics
import sys
import time

import roseinfer.backends.cpu_attention as cpu_attention
from roseinfer.config import SamplingParams
from roseinfer.engine import InferenceEngine

MODES = {
    "fp32": ({}, "auto"),
    "bf16": ({"dtype": "bfloat16"}, "auto"),
    "int8": ({"quantization": "int8"}, "auto"),
    "int8+kv8": ({"quantization": "int8"}, "int8"),
}
ROUTES = {"sdpa": cpu_attention.PREFILL_KERNEL_MAX_QUERIES, "kernel": 1 << 30}
PROMPT_LEN = 2000

reps = int(sys.argv[1]) if len(sys.argv) > 1 else 3
modes = sys.argv[2].split(",") if len(sys.argv) > 2 else list(MODES)
cores = {
    n: InferenceEngine(model="smollm2", **MODES[n][0]).new_core(
        kv_cache_memory=1.0, kv_cache_dtype=MODES[n][1]
    )
    for n in modes
}
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)
times: dict[tuple[str, str], list[float]] = {(n, r): [] for n in modes for r in ROUTES}
steps: dict[tuple[str, str], list[list[float]]] = {k: [] for k in times}
i = 0
for rep in range(reps + 1):  # the first round warms up
    for n, core in cores.items():
        for route, limit in ROUTES.items():
            cpu_attention.PREFILL_KERNEL_MAX_QUERIES = limit
            i += 1
            prompt = [100 + (i * 7919 + 31 * j) % 40000 for j in range(PROMPT_LEN)]
            core.add_request(f"{n}-{route}-{rep}", prompt, params)
            start, marks = time.perf_counter(), []
            while core.has_unfinished():
                core.step()
                marks.append(time.perf_counter())
            if rep:
                times[n, route].append(marks[-1] - start)
                steps[n, route].append(
                    [b - a for a, b in zip([start, *marks], marks, strict=False)]
                )
for (n, route), t in times.items():
    per_step = [statistics.median(s) * 1000 for s in zip(*steps[n, route], strict=True)]
    print(
        f"{n} {route}: first token after {statistics.median(t) * 1000:.0f} ms "
        f"(steps {' / '.join(f'{s:.0f}' for s in per_step)} ms; "
        f"each round {', '.join(f'{x * 1000:.0f}' for x in t)})",
        flush=True,
    )
