"""Decode time per token through `LLM.generate` (SmolLM2, the default model and dtype), greedy
and with a common sampling setting (T 0.8, top-k 40, top-p 0.95), one prompt and eight:
    PYTHONPATH=<tree> .venv/bin/python docs/bench/session56/generate_ab.py
Prints one line per case: median ms per output token over 3 runs of 96 tokens each."""

from __future__ import annotations

import statistics
import time

from roseinfer import LLM
from roseinfer.sampling_params import SamplingParams

llm = LLM()
CASES = {"greedy": {"temperature": 0.0},
         "T.8 k40 p.95": {"temperature": 0.8, "top_k": 40, "top_p": 0.95, "seed": 1}}  # fmt: skip
for batch in (1, 8):
    prompts = [f"Write a story about the number {i}." for i in range(batch)]
    for name, fields in CASES.items():
        params = SamplingParams(max_tokens=96, ignore_eos=True, **fields)
        llm.generate(prompts, SamplingParams(max_tokens=4))  # warm the prompts' cache
        times = []
        for _ in range(3):
            start = time.perf_counter()
            out = llm.generate(prompts, params)
            times.append((time.perf_counter() - start) * 1e3 / 96)
            assert all(len(o.outputs[0].token_ids) == 96 for o in out)
        print(f"batch {batch} {name}: {statistics.median(times):.2f} ms per step")
