"""Exact logit ties (duplicated lm_head rows): greedy argmax, top_k (ties with the k-th kept),
top_p, min_p vs transformers' warpers."""
import os, sys, shutil
from common import *
import torch.nn.functional as F
import transformers
from transformers.generation.logits_process import TopKLogitsWarper, TopPLogitsWarper, MinPLogitsWarper, TemperatureLogitsWarper
from roseinfer import LLM, SamplingParams
kind = sys.argv[1] if len(sys.argv) > 1 else "llama"
src = model_dir(kind); dst = f"{MD}/{kind}_dup"
hf = transformers.AutoModelForCausalLM.from_pretrained(src, dtype=torch.float32).eval()
V = hf.config.vocab_size
W = hf.get_output_embeddings().weight
with torch.no_grad():
    # every token t >= 3 gets the lm_head row of (t // 4) * 4 + 3ish: groups of 4 identical logits
    for t in range(3, V):
        g = 3 + ((t - 3) // 4) * 4
        W[t] = W[g]
hf.save_pretrained(dst)
for f in os.listdir(src):
    if f.startswith("tok") or f.startswith("special") or f.endswith(".jinja") or f == "vocab.json" or f == "merges.txt":
        shutil.copy(os.path.join(src, f), dst)
hf = transformers.AutoModelForCausalLM.from_pretrained(dst, dtype=torch.float32).eval()
P = [rand_prompt(V, 8, 61), rand_prompt(V, 50, 62), rand_prompt(V, 20, 63)]
ref = [hf_greedy(hf, p, 30) for p in P]
fails = []
for cname, cfg in {"default": {}, "eager": dict(enforce_eager=True), "reference": dict(attention_backend="reference")}.items():
    llm = LLM(dst, dtype="float32", **cfg)
    outs = llm.generate(P, SamplingParams(max_tokens=30, temperature=0, ignore_eos=True), use_tqdm=False)
    for i, o in enumerate(outs):
        g = list(o.outputs[0].token_ids)
        if g != ref[i]:
            j = next(k for k, (a, b) in enumerate(zip(g, ref[i])) if a != b)
            lg = hf_logits(hf, P[i] + g[:j])[-1]
            fails.append(("greedy", cname, i, j, "ours", g[j], "hf", ref[i][j], "logits equal:", bool(lg[g[j]] == lg[ref[i][j]])))
print("greedy tie fails", len(fails)); [print(" ", f) for f in fails]
# processed distributions at the first step
llm = LLM(dst, dtype="float32")
bad = 0; n = 0
for c in [dict(top_k=1), dict(top_k=2), dict(top_k=5), dict(top_k=6), dict(top_p=0.3), dict(top_p=0.05), dict(min_p=0.9), dict(top_k=3, top_p=0.5)]:
    for p in P:
        o = llm.generate([p], SamplingParams(max_tokens=1, temperature=1.0, seed=3, logprobs=20, logprobs_processed=True, **c), use_tqdm=False)[0]
        lp = o.outputs[0].logprobs[0]
        z = hf_logits(hf, p)[-1][None]; inp = torch.tensor([p])
        if "top_k" in c: z = TopKLogitsWarper(c["top_k"])(inp, z)
        if "top_p" in c: z = TopPLogitsWarper(c["top_p"])(inp, z)
        if "min_p" in c: z = MinPLogitsWarper(c["min_p"])(inp, z)
        r = F.log_softmax(z[0], -1); kept = set(torch.nonzero(torch.isfinite(r)).flatten().tolist())
        ours = set(lp); n += 1
        if ours != kept or any(abs(v.logprob - float(r[k])) > 1e-4 for k, v in lp.items()):
            bad += 1; print("DIST", c, "ours", sorted((k, round(v.logprob, 4)) for k, v in lp.items()), "hf", sorted((k, round(float(r[k]), 4)) for k in kept))
print(f"tie distributions: cases={n} mismatches={bad}")
