"""Where a shared-prefix prefill step goes (torch.profiler, the ops' own CPU time): 32 requests
of a cached 1,000-token prefix + 24 new tokens each, after a warm-up round. Session 14.

    PYTHONPATH=TREE .venv/bin/python docs/bench/session14/shared_prefix_profile.py [MODE]
"""

import sys

import torch

from roseinfer.config import SamplingParams
from roseinfer.engine import InferenceEngine

mode = sys.argv[1] if len(sys.argv) > 1 else "fp32"
options = {"fp32": ({}, "auto"), "int8+kv8": ({"quantization": "int8"}, "int8")}[mode]
core = InferenceEngine(model="smollm2", **options[0]).new_core(
    kv_cache_memory=1.0, kv_cache_dtype=options[1]
)
params = SamplingParams(max_new_tokens=1, temperature=0, ignore_eos=True)
for r in range(2):
    prefix = [100 + (r * 7919 + 31 * j) % 40000 for j in range(1000)]
    core.add_request(f"warm-{r}", prefix + [5], params)
    while core.has_unfinished():
        core.step()
    for i in range(32):
        q = [200 + (r * 104729 + 17 * i + 13 * j) % 30000 for j in range(24)]
        core.add_request(f"{r}-{i}", prefix + q, params)
    if r == 0:
        while core.has_unfinished():
            core.step()
        continue
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        while core.has_unfinished():
            core.step()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=25))
