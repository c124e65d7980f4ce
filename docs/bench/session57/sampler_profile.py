"""The sampler's calls inside `LLM.generate` under cProfile (SmolLM2, default dtype, 32 prompts,
64 tokens, T 0.7 / top-p 0.9, seeded): where a sampled step's time goes, by function:
    .venv/bin/python docs/bench/session57/sampler_profile.py"""

from __future__ import annotations

import cProfile
import io
import pstats

from roseinfer import LLM
from roseinfer.layers import sampler as sampler_module
from roseinfer.sampling_params import SamplingParams

llm = LLM()
profile = cProfile.Profile()
call = sampler_module.Sampler.__call__


def profiled(self, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN201
    profile.enable()
    try:
        out = call(self, *args, **kwargs)
        out.token_ids.tolist()
        return out
    finally:
        profile.disable()


sampler_module.Sampler.__call__ = profiled
prompts = [f"Write a story about the number {i}." for i in range(32)]
llm.generate(prompts, SamplingParams(max_tokens=4), use_tqdm=False)
profile = cProfile.Profile()
params = SamplingParams(max_tokens=64, ignore_eos=True, temperature=0.7, top_p=0.9, seed=1)
llm.generate(prompts, params, use_tqdm=False)
text = io.StringIO()
pstats.Stats(profile, stream=text).sort_stats("tottime").print_stats(16)
print(text.getvalue())
