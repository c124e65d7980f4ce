"""Time to first token of one ~2,000-token prompt, offline (the engine's steps alone: four
512-token prefill chunks, then the first token), in four modes taking turns, each prompt new
(no prefix-cache hits). Session 13: the AVX2 linears widening narrow weights for prefill.

    PYTHONPATH=TREE .venv/bin/python docs/bench/session13/prefill_steps.py TAG [REPS]
    BASE=/work/wt-base docs/bench/session13/ab_prefill.sh   # a base tree and this one, alternated
"""

import statistics
import sys
import time

from roseinfer.config import SamplingParams
from roseinfer.engine import InferenceEngine

MODES = {
    "fp32": ({}, "auto"),
    "bf16": ({"dtype": "bfloat16"}, "auto"),
    "int8": ({"quantization": "int8"}, "auto"),
    "int8+kv8": ({"quantization": "int8"}, "int8"),
}
PROMPT_LEN = 2000

tag, reps = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
cores = {
    n: InferenceEngine(model="smollm2", **o).new_core(kv_cache_memory=1.0, kv_cache_dtype=kv)
    for n, (o, kv) in MODES.items()
}
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)
times: dict[str, list[float]] = {n: [] for n in MODES}
steps: dict[str, list[list[float]]] = {n: [] for n in MODES}
for r in range(reps + 1):  # the first round warms up
    for n, core in cores.items():
        prompt = [100 + (r * 7919 + 31 * j) % 40000 for j in range(PROMPT_LEN)]
        core.add_request(f"{n}-{r}", prompt, params)
        start, marks = time.perf_counter(), []
        while core.has_unfinished():
            core.step()
            marks.append(time.perf_counter())
        if r:
            times[n].append(marks[-1] - start)
            steps[n].append([b - a for a, b in zip([start] + marks, marks, strict=False)])
for n in MODES:
    per_step = [statistics.median(s) * 1000 for s in zip(*steps[n], strict=True)]
    print(
        f"{tag} {n}: first token after {statistics.median(times[n]) * 1000:.0f} ms "
        f"(steps {' / '.join(f'{s:.0f}' for s in per_step)} ms)",
        flush=True,
    )
