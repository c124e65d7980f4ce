import json, sys, torch
import fuzzlib as F
import roseinfer.layers.sampler as S
from roseinfer.engine.model_runner import ModelRunner
w = json.load(open("fails/w352.json")); t = 8
req = w["reqs"][t]
tag = ["batch"]; rec = {}; cur = {}
o_s = ModelRunner._sample
def _sample(self, seqs, logits):
    cur["seqs"] = seqs; return o_s(self, seqs, logits)
ModelRunner._sample = _sample
o_k = S.apply_top_k_top_p
def tk(logits, top_k, top_p):
    out = o_k(logits, top_k, top_p)
    for i, s in enumerate(cur["seqs"]):
        if s.token_ids[:s.num_prompt_tokens] == req["prompt"] and s.num_output_tokens == 7:
            rec[tag[0]] = (logits[i].clone(), out[i].clone(), None if top_k is None else top_k.tolist(), logits.shape, logits.dtype, logits.stride())
    return out
S.apply_top_k_top_p = tk
llm = F.make_llm(w["backend"], **w["cfg"])
outs, steps = F.run_batch(llm, w["reqs"], {int(k): v for k, v in w["abort_at"].items()})
tag[0] = "idle"
o2, _ = F.run_batch(llm, [req])
tag[0] = "ref"
F.ref_llm(w["backend"], 2).generate([req["prompt"]], F.to_params(req["params"]), use_tqdm=False)
for tg in ("batch", "idle", "ref"):
    x = rec[tg]
    fin = torch.isfinite(x[1]).nonzero().squeeze(1).tolist()
    top2 = x[0].topk(3)
    print(tg, "in top2", [(i, round(v, 6)) for v, i in zip(top2.values.tolist(), top2.indices.tolist())], "kept", fin[:5], "top_k", x[2], x[3], x[4], x[5])
