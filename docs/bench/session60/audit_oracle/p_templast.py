"""temperature_last (llama.cpp's order: top-k/top-p/min-p on the untempered distribution, then the
temperature) and greedy with logprobs_processed, against transformers' warpers applied in that order."""
from common import *
import torch.nn.functional as F
from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper, MinPLogitsWarper
from roseinfer import LLM, SamplingParams
hf = hf_model("llama"); V = hf.config.vocab_size
llm = LLM(model_dir("llama"), dtype="float32")
P = [rand_prompt(V, 9, 91), rand_prompt(V, 33, 92)]
bad = n = 0
for c in [dict(temperature=2.0, top_k=10), dict(temperature=0.3, top_p=0.5), dict(temperature=3.0, min_p=0.3), dict(temperature=0.5, top_k=12, top_p=0.7, min_p=0.1)]:
    outs = llm.generate(P, SamplingParams(max_tokens=8, seed=1, temperature_last=True, logprobs=20, logprobs_processed=True, ignore_eos=True, **c), use_tqdm=False)
    for p, o in zip(P, outs):
        g = list(o.outputs[0].token_ids); full = hf_logits(hf, p + g)[len(p) - 1:-1]
        for t in range(len(g)):
            z = full[t][None]; inp = torch.tensor([p + g[:t]])
            if "top_k" in c: z = TopKLogitsWarper(c["top_k"])(inp, z)
            if "top_p" in c: z = TopPLogitsWarper(c["top_p"])(inp, z)
            if "min_p" in c: z = MinPLogitsWarper(c["min_p"])(inp, z)
            z = TemperatureLogitsWarper(c["temperature"])(inp, z)
            r = F.log_softmax(z[0], -1); kept = set(torch.nonzero(torch.isfinite(r)).flatten().tolist())
            lp = o.outputs[0].logprobs[t]; n += 1
            if (len(kept) <= 20 and set(lp) != kept) or any(abs(v.logprob - float(r[k])) > 1e-4 for k, v in lp.items()):
                bad += 1; print("DIFF", c, t, sorted(lp)[:10], sorted(kept)[:10])
# greedy + processed: the token alone, logprob 0
o = llm.generate(P, SamplingParams(max_tokens=8, temperature=0, logprobs=5, logprobs_processed=True, ignore_eos=True), use_tqdm=False)
for p, oo in zip(P, o):
    for t, lp in enumerate(oo.outputs[0].logprobs):
        n += 1
        if list(lp) != [oo.outputs[0].token_ids[t]] or abs(list(lp.values())[0].logprob) > 1e-6: bad += 1; print("GREEDY", lp)
print(f"temperature_last / greedy-processed steps={n} mismatches={bad}")
