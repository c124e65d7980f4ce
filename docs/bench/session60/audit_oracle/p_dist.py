"""Processed distribution (logprobs_processed=True, top 20) and raw logprobs vs transformers'
logits processors on the same weights, step by step along roseinfer's own sampled tokens."""
import sys, math
from common import *
import torch.nn.functional as F
from transformers.generation.logits_process import (
    RepetitionPenaltyLogitsProcessor, TemperatureLogitsWarper, TopKLogitsWarper,
    TopPLogitsWarper, MinPLogitsWarper, SequenceBiasLogitsProcessor)
from roseinfer import LLM, SamplingParams

kind = sys.argv[1] if len(sys.argv) > 1 else "llama"
hf = hf_model(kind); V = hf.config.vocab_size
EOS = hf.config.eos_token_id
cfg = dict(enforce_eager=True) if "eager" in sys.argv else {}
if "preempt" in sys.argv: cfg = dict(num_kv_blocks=17, block_size=4, max_num_batched_tokens=16)
llm = LLM(model_dir(kind), dtype="float32", **cfg)
from conftest import record_preemptions
pre = record_preemptions(llm)
NCH = 2 if "n2" in sys.argv else 1
T = 10
CASES = {
  "t0.7_k5": dict(temperature=0.7, top_k=5),
  "k1": dict(temperature=1.0, top_k=1),
  "k=V": dict(temperature=1.0, top_k=V),
  "k=V-1": dict(temperature=1.0, top_k=V - 1),
  "p0.9": dict(temperature=1.0, top_p=0.9),
  "p0.5_t2": dict(temperature=2.0, top_p=0.5),
  "p0.999999": dict(temperature=1.0, top_p=0.999999),
  "p1e-6": dict(temperature=1.0, top_p=1e-6),
  "minp0.1": dict(temperature=1.0, min_p=0.1),
  "minp0.5_t0.5": dict(temperature=0.5, min_p=0.5),
  "combo": dict(temperature=0.7, top_k=50, top_p=0.8, min_p=0.05),
  "rep1.3": dict(temperature=1.0, top_k=15, repetition_penalty=1.3),
  "rep0.7": dict(temperature=1.0, top_k=15, repetition_penalty=0.7),
  "freq1.5_pres1": dict(temperature=1.0, top_k=15, frequency_penalty=1.5, presence_penalty=1.0),
  "freq-1.5": dict(temperature=1.0, top_k=15, frequency_penalty=-1.5),
  "pres-2_rep1.2": dict(temperature=1.0, top_k=15, presence_penalty=-2.0, repetition_penalty=1.2),
  "bias": dict(temperature=1.0, top_k=15, logit_bias={5: 5.0, 7: -100.0, 11: 3.0}),
  "bias_rep": dict(temperature=0.8, top_k=15, logit_bias={5: 5.0, 11: -3.0}, repetition_penalty=1.5),
  "t1e-4": dict(temperature=1e-4),
  "t3_k20": dict(temperature=3.0, top_k=20),
  "t10_p0.2": dict(temperature=10.0, top_p=0.2),
  "allowed_p0.8": dict(temperature=1.0, top_p=0.8, allowed_token_ids=list(range(50, 120))),
  "allowed_k3_rep": dict(temperature=1.0, top_k=3, allowed_token_ids=list(range(50, 120)), repetition_penalty=1.4),
  "t10_p0.999": dict(temperature=10.0, top_p=0.999),
  "t5_k300": dict(temperature=5.0, top_k=300),
  "t5_k300_p0.97": dict(temperature=5.0, top_k=300, top_p=0.97),
  "t8_minp0.3": dict(temperature=8.0, min_p=0.3),
}
if "--cases" in sys.argv: CASES = {k: CASES[k] for k in sys.argv[sys.argv.index("--cases")+1].split(",")}

def ref_processed(ids, gen, z, c):
    inp = torch.tensor([ids + gen])
    z = z.clone()[None]
    if c.get("allowed_token_ids"):
        m = torch.full_like(z, float("-inf")); m[0, c["allowed_token_ids"]] = 0; z = z + m
    if c.get("logit_bias"):
        for t, b in c["logit_bias"].items(): z[0, t] += b
    if c.get("repetition_penalty", 1.0) != 1.0:
        z = RepetitionPenaltyLogitsProcessor(c["repetition_penalty"])(inp, z)
    f, p = c.get("frequency_penalty", 0.0), c.get("presence_penalty", 0.0)
    if f or p:
        cnt = torch.bincount(torch.tensor(gen, dtype=torch.long), minlength=V).float() if gen else torch.zeros(V)
        z[0] -= f * cnt + p * (cnt > 0).float()
    t = c.get("temperature", 1.0)
    z = TemperatureLogitsWarper(t)(inp, z)
    if c.get("top_k", 0) and c["top_k"] > 0: z = TopKLogitsWarper(min(c["top_k"], V))(inp, z)
    if c.get("top_p", 1.0) < 1.0: z = TopPLogitsWarper(c["top_p"])(inp, z)
    if c.get("min_p", 0.0) > 0: z = MinPLogitsWarper(c["min_p"])(inp, z)
    return F.log_softmax(z[0], -1)

prompts = [rand_prompt(V, 9, 11), rand_prompt(V, 40, 12) + rand_prompt(V, 5, 12)[:3] * 5]
nsteps = nbad = nbad_raw = 0
worst_raw = 0.0
for name, c in CASES.items():
    for proc in (True, False):
        sps = [SamplingParams(max_tokens=T, seed=100 + i, ignore_eos=True, logprobs=20,
                              logprobs_processed=proc, n=NCH, **c) for i in range(len(prompts))]
        outs = llm.generate(prompts, sps, use_tqdm=False)
        for p, o, co in [(p, o, co) for p, o in zip(prompts, outs) for co in o.outputs]:
            gen = list(co.token_ids)
            full = hf_logits(hf, p + gen)[len(p) - 1: len(p) - 1 + len(gen)]
            for t in range(len(gen)):
                nsteps += 1
                lp = co.logprobs[t]
                if proc:
                    ref = ref_processed(p, gen[:t], full[t], c)
                    kept = set(torch.nonzero(torch.isfinite(ref)).flatten().tolist())
                    probs_ours = {k: v.logprob for k, v in lp.items()}
                    msg = []
                    if gen[t] not in kept: msg.append(f"sampled {gen[t]} not in ref kept set (size {len(kept)})")
                    if len(kept) <= 20 and set(probs_ours) != kept:
                        msg.append(f"set differs: ours {sorted(probs_ours)} ref {sorted(kept)}")
                    for k, v in probs_ours.items():
                        if not math.isfinite(ref[k]) or abs(v - float(ref[k])) > 1e-3:
                            msg.append(f"tok {k}: ours {v:.5f} ref {float(ref[k]):.5f}"); break
                    if msg:
                        nbad += 1
                        if nbad < 25: print("PROC", name, "step", t, msg[:2])
                else:
                    ref = F.log_softmax(full[t], -1)
                    top = ref.topk(20)
                    ours_ids = [k for k in lp][1:] if len(lp) == 21 else list(lp)
                    d = max(abs(v.logprob - float(ref[k])) for k, v in lp.items())
                    rk = int((ref > ref[gen[t]]).sum()) + 1
                    worst_raw = max(worst_raw, d)
                    if d > 1e-4 or lp[gen[t]].rank != rk or set(top.indices.tolist()) - set(lp):
                        nbad_raw += 1
                        if nbad_raw < 10: print("RAW", name, t, d, lp[gen[t]].rank, rk)
    print(f"{name:15s} done", flush=True)
print("preemptions", len(pre), "choices", NCH)
print(f"kind={kind} steps={nsteps} processed mismatches={nbad} raw mismatches={nbad_raw} worst raw diff={worst_raw:.2e}")
