"""Probe a seeded mismatch: the target's raw logits, draw u and the sampled probs at each of its
tokens, alone vs batched."""
import json, sys
import torch
import fuzzlib as F
import roseinfer.layers.sampler as S
from roseinfer.engine.model_runner import ModelRunner

w = json.load(open(sys.argv[1])); t = w.get("target", int(sys.argv[2]) if len(sys.argv) > 2 else 0)
rec = {}
cur = {}
orig_sample = ModelRunner._sample
def _sample(self, seqs, logits):
    cur["seqs"] = seqs; cur["logits"] = logits.clone()
    return orig_sample(self, seqs, logits)
ModelRunner._sample = _sample
orig_from = S.sample_from
def sample_from(probs, u):
    out = orig_from(probs, u)
    for i, s in enumerate(cur["seqs"]):
        if s.params.seed is not None and list(s.token_ids[:s.num_prompt_tokens]) == w["reqs"][t]["prompt"] and s.index == 0:
            rec.setdefault(cur["tag"], {})[s.num_output_tokens] = (cur["logits"][i].clone(), probs[i].clone(), float(u[i]), int(out[i]), len(cur["seqs"]))
    return out
S.sample_from = sample_from
cur["tag"] = "ref"
(o,) = F.ref_llm(w["backend"], w["cfg"]["block_size"]).generate([w["reqs"][t]["prompt"]], F.to_params(w["reqs"][t]["params"]), use_tqdm=False)
cur["tag"] = "bat"
llm = F.make_llm(w["backend"], **w["cfg"])
outs, _ = F.run_batch(llm, w["reqs"], {int(k): v for k, v in w["abort_at"].items()})
for k in sorted(rec["ref"]):
    a, b = rec["ref"][k], rec["bat"].get(k)
    if b is None: break
    dl = (a[0] - b[0]).abs().max().item(); dp = (a[1] - b[1]).abs().max().item()
    print(k, "tok", a[3], b[3], "u", a[2] == b[2], "max|dlogit|", f"{dl:.3g}", "max|dprob|", f"{dp:.3g}", "batch", a[4], b[4])
    if a[3] != b[3]:
        pa = a[1].double(); tot = pa.sum(); cdf = pa.cumsum(0) / tot
        print("   u", a[2], "cdf at ref tok-1/tok", cdf[a[3]-1].item(), cdf[a[3]].item(), "batched tok", b[3])
        pb = b[1].double(); cdfb = pb.cumsum(0) / pb.sum()
        print("   batched cdf at", b[3]-1, b[3], cdfb[b[3]-1].item(), cdfb[b[3]].item())
        print("   distance of u to the nearest boundary:", min(abs(a[2]-cdf[a[3]-1].item()), abs(a[2]-cdf[a[3]].item())))
        break
