"""Prefix-cache hits (mid-block and on a block boundary) exercised and greedy-equal to transformers;
also the sampled path with a repetition penalty whose prompt tokens come from the cache."""
from common import *
from roseinfer import LLM, SamplingParams
import torch.nn.functional as F
tot = ok = 0
for kind in ["llama", "qwen2"]:
    hf = hf_model(kind); V = hf.config.vocab_size
    base = rand_prompt(V, 200, 81)
    for bs in (16, 7, 1):
        llm = LLM(model_dir(kind), dtype="float32", block_size=bs, max_num_batched_tokens=24)
        sp = SamplingParams(max_tokens=20, temperature=0, ignore_eos=True)
        llm.generate([base], sp, use_tqdm=False)
        for L in (bs * 3, bs * 3 + bs // 2 + 1, 37, 64, 200):
            p = base[:L] + rand_prompt(V, 5, L)  # shares L tokens then diverges
            for q in (p, base[:L]):
                o = llm.generate([q], sp, use_tqdm=False)[0]
                g = list(o.outputs[0].token_ids); r = hf_greedy(hf, q, 20)
                tot += 1; ok += g == r
                print(kind, "bs", bs, "shared", L, "len", len(q), "cached", o.num_cached_tokens, "OK" if g == r else "DIFF")
print("prefix cases", tot, "ok", ok)
