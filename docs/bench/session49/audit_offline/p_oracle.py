from common import *
import torch
from transformers import AutoModelForCausalLM
from roseinfer import SamplingParams
hf = AutoModelForCausalLM.from_pretrained(M, dtype=torch.float32).eval()
prompts = ["The capital of France is", "Hello", "def add(a, b):\n    return a + b\n" * 3, "Numbers: 0 1 2 3"]
N = 12
def hf_greedy(ids):
    with torch.no_grad():
        out = hf.generate(torch.tensor([ids]), max_new_tokens=N, do_sample=False, eos_token_id=None, pad_token_id=0)
    return out[0, len(ids):].tolist()
for cfg in [dict(), dict(max_num_batched_tokens=8, block_size=4), dict(attention_backend="reference", enforce_eager=True), dict(kv_cache_dtype="int8")]:
    L = llm(**cfg)
    ids = [L.encode(p) for p in prompts]
    outs = L.generate(ids, SamplingParams(temperature=0, max_tokens=N, ignore_eos=True), use_tqdm=False)
    ok = [o.outputs[0].token_ids == hf_greedy(i) for o, i in zip(outs, ids)]
    print(cfg, "match HF:", ok)
