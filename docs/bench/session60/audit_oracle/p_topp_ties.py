"""Minimal: exact logit ties straddling the top-p cut. transformers' TopPLogitsWarper (and vLLM's
top-p, same ascending sort) keeps the HIGHER token ids of a tied group; roseinfer keeps the LOWER.
Model: tiny random llama whose lm_head rows are duplicated in groups of 4 (tokens 3-6, 7-10, ...
have identical logits)."""
import os, shutil
from common import *
import torch.nn.functional as F
import transformers
from transformers.generation.logits_process import TopKLogitsWarper, TopPLogitsWarper
from roseinfer import LLM, SamplingParams
src = model_dir("llama"); dst = f"{MD}/llama_dup"
if not os.path.exists(f"{dst}/config.json"):
    hf = transformers.AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32).eval()
    W = hf.get_output_embeddings().weight
    with torch.no_grad():
        for t in range(3, hf.config.vocab_size): W[t] = W[3 + ((t - 3) // 4) * 4]
    hf.save_pretrained(dst)
    for f in os.listdir(src):
        if f.startswith(("tok", "special", "vocab", "merges", "chat")): shutil.copy(os.path.join(src, f), dst)
hf = transformers.AutoModelForCausalLM.from_pretrained(dst, dtype=torch.float32).eval()
V = hf.config.vocab_size
llm = LLM(dst, dtype="float32")
for p, c in [(rand_prompt(V, 8, 61), dict(top_p=0.05)), (rand_prompt(V, 8, 61), dict(top_k=3, top_p=0.5)),
             (rand_prompt(V, 50, 62), dict(top_k=3, top_p=0.5))]:
    o = llm.generate([p], SamplingParams(max_tokens=1, temperature=1.0, seed=0, logprobs=20,
                                         logprobs_processed=True, **c), use_tqdm=False)[0]
    ours = sorted(o.outputs[0].logprobs[0])
    z = hf_logits(hf, p)[-1][None]; inp = torch.tensor([p])
    if "top_k" in c: z = TopKLogitsWarper(c["top_k"])(inp, z)
    z = TopPLogitsWarper(c["top_p"])(inp, z)
    theirs = torch.nonzero(torch.isfinite(z[0])).flatten().tolist()
    print(c, "prompt len", len(p))
    print("   roseinfer kept (logprobs_processed):", ours)
    print("   transformers TopPLogitsWarper kept:  ", theirs, "MATCH" if ours == theirs else "DIFFER")
    # which tokens roseinfer draws over 400 seeds
    outs = llm.generate([p] * 400, [SamplingParams(max_tokens=1, temperature=1.0, seed=s, **c) for s in range(400)], use_tqdm=False)
    drawn = sorted({o.outputs[0].token_ids[0] for o in outs})
    print("   roseinfer drew over 400 seeds:", drawn, "outside transformers' set:", sorted(set(drawn) - set(theirs)))
