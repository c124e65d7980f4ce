"""32 prompts of ~450 random words and 64 greedy tokens each through `LLM` (SmolLM2, the given
--attention-backend), twice: the second round runs with the prompts' prefixes cached, so it is
mostly decode over ~500-token contexts. Session 11's A/B of the decode kernel's plain-loop path.

    .venv/bin/python docs/bench/session11/long_context_decode.py auto
"""

import random
import sys
import time

from roseinfer import LLM, SamplingParams

backend = sys.argv[1]
llm = LLM(attention_backend=backend, num_kv_blocks=2048)
random.seed(0)
words = (
    "the of and to in is was that for on it with as his he by at from her this be are had".split()
)
prompts = [" ".join(random.choice(words) for _ in range(450)) for _ in range(32)]
params = SamplingParams(max_tokens=64, temperature=0, ignore_eos=True)
llm.generate(prompts[:2], SamplingParams(max_tokens=4), use_tqdm=False)
for r in range(2):
    t = time.perf_counter()
    outs = llm.generate(prompts, params, use_tqdm=False)
    dt = time.perf_counter() - t
    print(
        backend,
        f"round {r}: {32 * 64 / dt:.1f} output tok/s, {dt:.1f} s (32 x ~450-token prompts, 64 tokens each)",
        flush=True,
    )
