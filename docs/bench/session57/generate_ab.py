"""Decode time per token through `LLM.generate` (SmolLM2, the default model and dtype), greedy
and with three common sampling settings (T 0.8 / top-k 40 / top-p 0.95; T 0.7 / top-p 0.9 as
OpenAI-style clients send it; top-p 0.95 alone, whose set often reaches past 256 tokens),
1, 8 and 32 prompts:
    PYTHONPATH=<tree> .venv/bin/python docs/bench/session57/generate_ab.py
Prints one line per case: median ms per step over 3 runs of 64 tokens each."""

from __future__ import annotations

import statistics
import time

from roseinfer import LLM
from roseinfer.sampling_params import SamplingParams

llm = LLM()
CASES = {"greedy": {"temperature": 0.0},
         "T.8 k40 p.95": {"temperature": 0.8, "top_k": 40, "top_p": 0.95, "seed": 1},
         "T.7 p.9": {"temperature": 0.7, "top_p": 0.9, "seed": 1},
         "T1 p.95": {"top_p": 0.95, "seed": 1}}  # fmt: skip
for batch in (1, 8, 32):
    prompts = [f"Write a story about the number {i}." for i in range(batch)]
    llm.generate(prompts, SamplingParams(max_tokens=4))  # warm the prompts' cache
    for name, fields in CASES.items():
        params = SamplingParams(max_tokens=64, ignore_eos=True, **fields)
        times = []
        for _ in range(3):
            start = time.perf_counter()
            out = llm.generate(prompts, params, use_tqdm=False)
            times.append((time.perf_counter() - start) * 1e3 / 64)
            assert all(len(o.outputs[0].token_ids) == 64 for o in out)
        print(f"batch {batch} {name}: {statistics.median(times):.2f} ms per step", flush=True)
