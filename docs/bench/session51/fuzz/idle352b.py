import json, sys, torch
import fuzzlib as F
from roseinfer.engine.model_runner import ModelRunner
w = json.load(open("fails/w352.json")); t = 8
req = w["reqs"][t]
rec = {}; tag = ["batch"]
orig = ModelRunner._sample
def _sample(self, seqs, logits):
    for i, s in enumerate(seqs):
        if s.token_ids[:s.num_prompt_tokens] == req["prompt"]:
            rec.setdefault(tag[0], {})[s.num_output_tokens] = (logits[i].clone(), list(s.token_ids), s.block_table[:], s.num_cached_tokens)
    return orig(self, seqs, logits)
ModelRunner._sample = _sample
llm = F.make_llm(w["backend"], **w["cfg"])
outs, steps = F.run_batch(llm, w["reqs"], {int(k): v for k, v in w["abort_at"].items()})
tag[0] = "idle"
bm = llm.engine.block_manager
o2, _ = F.run_batch(llm, [req])
tag[0] = "ref"
F.ref_llm(w["backend"], 2).generate([req["prompt"]], F.to_params(req["params"]), use_tqdm=False)
for k in range(9):
    a, b = rec["ref"][k][0], rec["idle"][k][0]
    print(k, "max|d| idle-ref", f"{(a-b).abs().max().item():.3g}", "batch-ref", f"{(rec['batch'][k][0]-a).abs().max().item():.3g}" if k in rec['batch'] else None)
print("idle tokens", rec["idle"][8][1][35:], "\nref tokens ", rec["ref"][8][1][35:])
print("idle blocks", rec["idle"][8][2], "cached", rec["idle"][8][3])
