"""Time to first token of 32 requests sharing a cached 1,000-token prefix, offline (the
engine's steps alone): the prefix is prefilled once by a warm-up request, then 32 requests of
prefix + 24 new tokens are added together and stepped until each has its first token. Beside it
the same 32 questions without the prefix. Session 14: what a prefix-cache hit costs.

    PYTHONPATH=TREE .venv/bin/python docs/bench/session14/shared_prefix_steps.py TAG [REPS]
"""

import os
import statistics
import sys
import time

import roseinfer.backends.cpu_attention as cpu_attention
from roseinfer.config import SamplingParams
from roseinfer.engine import InferenceEngine

PREFIX_LEN, QUESTION_LEN, REQUESTS = 1000, 24, 32
if os.environ.get("PER_TOKEN_MAX_KEYS"):
    cpu_attention.PER_TOKEN_MAX_KEYS = int(os.environ["PER_TOKEN_MAX_KEYS"])

tag, reps = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 3
modes = os.environ.get("MODES", "fp32,int8+kv8").split(",")
options = {"fp32": ({}, "auto"), "int8+kv8": ({"quantization": "int8"}, "int8"),
           "bf16": ({"dtype": "bfloat16"}, "auto")}  # fmt: skip
cores = {
    m: InferenceEngine(model="smollm2", **options[m][0]).new_core(
        kv_cache_memory=1.0, kv_cache_dtype=options[m][1]
    )
    for m in modes
}
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)


def first_tokens(core, prompts: list[list[int]], name: str) -> tuple[float, list[float]]:
    for i, p in enumerate(prompts):
        core.add_request(f"{name}-{i}", p, params)
    start, marks = time.perf_counter(), []
    while core.has_unfinished():
        core.step()
        marks.append(time.perf_counter())
    return marks[-1] - start, [b - a for a, b in zip([start] + marks, marks, strict=False)]


results: dict[str, list[float]] = {}
for r in range(reps + 1):  # the first round warms up
    for m, core in cores.items():
        prefix = [100 + (r * 7919 + 31 * j) % 40000 for j in range(PREFIX_LEN)]
        questions = [
            [200 + (r * 104729 + 17 * i + 13 * j) % 30000 for j in range(QUESTION_LEN)]
            for i in range(REQUESTS)
        ]
        first_tokens(core, [prefix + [5]], f"{m}-warm-{r}")  # the prefix into the cache
        for case, prompts in (("prefix", [prefix + q for q in questions]), ("none", questions)):
            total, steps = first_tokens(core, prompts, f"{m}-{case}-{r}")
            if r:
                key = f"{m} {case}"
                results.setdefault(key, []).append(total)
                results.setdefault(key + " steps", []).append(len(steps))
for key in (k for k in results if not k.endswith(" steps")):
    t = results[key]
    print(
        f"{tag} {key}: all first tokens after {statistics.median(t) * 1000:.0f} ms "
        f"({' / '.join(f'{x * 1000:.0f}' for x in t)}; {results[key + ' steps'][0]} steps)",
        flush=True,
    )
