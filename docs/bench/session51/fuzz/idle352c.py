import json, sys, torch
import fuzzlib as F
import roseinfer.layers.penalties as P
w = json.load(open("fails/w352.json")); t = 8
req = w["reqs"][t]
tag = ["batch"]; rec = {}
orig = P.TokenCounts.gather
def gather(self, seqs, batch_rows, vocab):
    out = orig(self, seqs, batch_rows, vocab)
    for s, r in zip(seqs, batch_rows):
        if s.token_ids[:s.num_prompt_tokens] == req["prompt"]:
            m = out.rows == r
            d = dict(zip(out.cols[m].tolist(), out.counts[m].tolist()))
            outs_ = s.token_ids[s.num_prompt_tokens:]
            expect = {t_: outs_.count(t_) for t_ in set(s.token_ids)}
            bad = {k: (d.get(k), v) for k, v in expect.items() if d.get(k) != v}
            rec.setdefault(tag[0], []).append((s.seq_id, len(outs_), bad, self.slots[s.seq_id].row, len(self.slots)))
    return out
P.TokenCounts.gather = gather
llm = F.make_llm(w["backend"], **w["cfg"])
outs, steps = F.run_batch(llm, w["reqs"], {int(k): v for k, v in w["abort_at"].items()})
print("slots after batch", {k: (v.row, v.seq.is_finished, v.counted) for k, v in llm.engine.runner.sampler.token_counts.slots.items()})
tag[0] = "idle"
o2, _ = F.run_batch(llm, [req])
for tg in ("batch", "idle"):
    for x in rec.get(tg, []):
        if x[2]: print(tg, x)
print("idle rows", [(x[0], x[1], x[3], x[4]) for x in rec["idle"]][:10])
