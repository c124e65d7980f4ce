"""How many tokens SmolLM2's top-p sets hold in `LLM.generate` (32 prompts, 128 tokens, T 1):
the share of rows whose set needs more than 256, 1,024, 4,096 and 12,288 of the likeliest
tokens, and the widest, at top-p 0.9 and 0.95:
    .venv/bin/python docs/bench/session57/top_p_width.py"""

from __future__ import annotations

import torch

from roseinfer import LLM
from roseinfer.layers import sampler as sampler_module
from roseinfer.sampling_params import SamplingParams

llm = LLM()
widths: list[int] = []
tiers = sampler_module.truncate_in_tiers


def measuring(logits, top_k, top_p, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN201
    if top_p is not None:  # (once a step: every row)
        mass = logits.float().softmax(-1).sort(-1, descending=True).values.cumsum(-1)
        widths.extend(((mass < top_p.unsqueeze(1)).sum(-1) + 1).tolist())
    return tiers(logits, top_k, top_p, *args, **kwargs)


sampler_module.truncate_in_tiers = measuring
prompts = [f"Write a story about the number {i}." for i in range(32)]
for p in (0.9, 0.95):
    widths.clear()
    llm.generate(prompts, SamplingParams(max_tokens=128, ignore_eos=True, top_p=p, seed=3),
                 use_tqdm=False)  # fmt: skip
    n = torch.tensor(widths)
    shares = ", ".join(f"> {x}: {100 * float((n > x).float().mean()):.1f} %"
                       for x in (256, 1024, 4096, 12288))  # fmt: skip
    print(f"top-p {p}: {len(n)} rows, {shares}, widest {int(n.max())}", flush=True)
