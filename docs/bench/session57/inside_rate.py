"""The sampler inside `LLM.generate` (SmolLM2, default dtype, 32 prompts, 128 tokens): how many
rows each candidate tier looked at and kept inside, and the sampler's median and p90 ms a call,
by sampling setting. Needs a tree with `truncate_in_tiers` (session 57):
    .venv/bin/python docs/bench/session57/inside_rate.py"""

from __future__ import annotations

import collections
import statistics
import time

from roseinfer import LLM
from roseinfer.layers import sampler as sampler_module
from roseinfer.layers import truncation
from roseinfer.sampling_params import SamplingParams

llm = LLM()
count: collections.Counter[str] = collections.Counter()
truncate = truncation.truncate


def counting(*args, **kwargs):  # noqa: ANN002, ANN003, ANN201
    t = truncate(*args, **kwargs)
    m = t.values.shape[1]
    count[f"rows at {m}"] += len(t.inside)
    count[f"inside {m}"] += int(t.inside.sum())
    return t


truncation.truncate = counting  # (truncate_in_tiers looks it up in its module)
times: list[float] = []
call = sampler_module.Sampler.__call__


def timed(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN201
    start = time.perf_counter()
    out = call(self, *args, **kwargs)
    out.token_ids.tolist()
    times.append(time.perf_counter() - start)
    return out


sampler_module.Sampler.__call__ = timed
prompts = [f"Write a story about the number {i}." for i in range(32)]
llm.generate(prompts, SamplingParams(max_tokens=4), use_tqdm=False)
CASES = {"T.7 p.9": {"temperature": 0.7, "top_p": 0.9, "seed": 1},
         "T1 p.95": {"top_p": 0.95, "seed": 1},
         "T.8 k40 p.95": {"temperature": 0.8, "top_k": 40, "top_p": 0.95, "seed": 1},
         "T1 p.9": {"top_p": 0.9}}  # fmt: skip
for name, fields in CASES.items():
    count.clear()
    times.clear()
    llm.generate(prompts, SamplingParams(max_tokens=128, ignore_eos=True, **fields), use_tqdm=False)
    p90 = sorted(times)[int(len(times) * 0.9)]
    print(f"{name}: {dict(count)}, sampler median {statistics.median(times) * 1e3:.2f} ms, "
          f"p90 {p90 * 1e3:.2f} ms", flush=True)  # fmt: skip
