import json, sys
import fuzzlib as F
w = json.load(open("fails/w352.json"))
memo = {}
llm = F.make_llm(w["backend"], **w["cfg"])
outs, steps = F.run_batch(llm, w["reqs"], {int(k): v for k, v in w["abort_at"].items()})
t = 8
want = F.reference(w["backend"], w["cfg"]["block_size"], w["reqs"][t], memo)
print("batched", F.compare(F.summarize(outs[t]), want)[:2])
for rep in range(3):
    o2, _ = F.run_batch(llm, [w["reqs"][t]])
    print("idle", rep, F.compare(F.summarize(o2[0]), want)[:2])
fresh = F.make_llm(w["backend"], **w["cfg"])
o3, _ = F.run_batch(fresh, [w["reqs"][t]])
print("fresh same cfg", F.compare(F.summarize(o3[0]), want)[:2])
