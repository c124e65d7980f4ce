"""Seeded sampling: alone vs batched, n choices vs seed+i, across engine configs; plus a
frequency test of first-token draws against transformers' processed distribution."""
import sys, math
from common import *
import torch.nn.functional as F
from transformers.generation.logits_process import TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper, MinPLogitsWarper
from roseinfer import LLM, SamplingParams
kind = sys.argv[1] if len(sys.argv) > 1 else "llama"
hf = hf_model(kind); V = hf.config.vocab_size
P = [rand_prompt(V, 7, 41), rand_prompt(V, 90, 42), rand_prompt(V, 30, 43)]
others = [rand_prompt(V, 150, 44), rand_prompt(V, 3, 45), rand_prompt(V, 64, 46)]
SPS = [dict(temperature=1.0), dict(temperature=0.8, top_k=20, top_p=0.9), dict(temperature=1.2, min_p=0.05, repetition_penalty=1.2),
       dict(temperature=0.9, top_p=0.95, frequency_penalty=0.5)]
def run(llm, prompts, sps):
    return [list(o.outputs[i].token_ids) for o in llm.generate(prompts, sps, use_tqdm=False) for i in range(len(o.outputs))]
res = {}
diffs = 0; total = 0
llm = LLM(model_dir(kind), dtype="float32")
for si, c in enumerate(SPS):
    for pi, p in enumerate(P):
        sp = SamplingParams(max_tokens=30, seed=1000 + si, ignore_eos=True, **c)
        a = run(llm, [p], [sp])[0]
        b = run(llm, others + [p] + others, [SamplingParams(max_tokens=25, seed=7, temperature=1.0, ignore_eos=True)] * 3 + [sp] + [SamplingParams(max_tokens=30, temperature=0.5, seed=9, ignore_eos=True)] * 3)[3]
        nn = run(llm, [p], [SamplingParams(max_tokens=30, seed=999 + si, n=3, ignore_eos=True, **c)])
        single1 = run(llm, [p], [SamplingParams(max_tokens=30, seed=1000 + si, ignore_eos=True, **c)])[0]
        total += 2
        if a != b: diffs += 1; print("alone!=batched", si, pi, a[:8], b[:8])
        if nn[1] != single1: diffs += 1; print("n=3 choice1 != seed+1", si, pi, nn[1][:8], single1[:8])
        res[(si, pi)] = a
for cname, cfg in {"eager": dict(enforce_eager=True), "chunk16_bs3": dict(max_num_batched_tokens=16, block_size=3)}.items():
    l2 = LLM(model_dir(kind), dtype="float32", **cfg)
    for (si, pi), a in res.items():
        b = run(l2, [P[pi]], [SamplingParams(max_tokens=30, seed=1000 + si, ignore_eos=True, **SPS[si])])[0]
        total += 1
        if a != b: diffs += 1; print(cname, "differs", si, pi, a[:8], b[:8])
print(f"seed determinism: comparisons={total} diffs={diffs}")
# frequency test of the draw: 3000 seeds, first token only
for c in [dict(temperature=1.0, top_k=5), dict(temperature=10.0, top_p=0.999), dict(temperature=2.0, min_p=0.2), dict(temperature=1.0)]:
    N = 3000
    p = P[0]
    outs = llm.generate([p] * N, [SamplingParams(max_tokens=1, seed=s, **c) for s in range(N)], use_tqdm=False)
    cnt = torch.bincount(torch.tensor([o.outputs[0].token_ids[0] for o in outs]), minlength=V).float()
    z = hf_logits(hf, p)[-1][None]; inp = torch.tensor([p])
    z = TemperatureLogitsWarper(c["temperature"])(inp, z)
    if "top_k" in c: z = TopKLogitsWarper(c["top_k"])(inp, z)
    if "top_p" in c: z = TopPLogitsWarper(c["top_p"])(inp, z)
    if "min_p" in c: z = MinPLogitsWarper(c["min_p"])(inp, z)
    pr = F.softmax(z[0], -1)
    outside = int(cnt[pr == 0].sum())
    # chi-square over bins with expected >= 5, rest pooled
    exp = pr * N; big = exp >= 5
    o_b, e_b = torch.cat([cnt[big], cnt[~big].sum()[None]]), torch.cat([exp[big], exp[~big].sum()[None]])
    keep = e_b > 0
    chi = float(((o_b[keep] - e_b[keep]) ** 2 / e_b[keep]).sum()); dof = int(keep.sum()) - 1
    print(f"draw freq {c}: support={int((pr>0).sum())} outside-support draws={outside} chi2={chi:.1f} dof={dof} (z={(chi-dof)/math.sqrt(2*dof):.2f})")
