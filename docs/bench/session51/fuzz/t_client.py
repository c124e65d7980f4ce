import json, fuzzlib as F
w = json.load(open("fails/w352.json"))
llm = F.make_llm(w["backend"], **w["cfg"])
outs = F.run_client(llm, w["reqs"], {0: 2, 3: 1}, 3)
memo = {}
n = 0
for r, o in zip(w["reqs"], outs):
    if o is None or not F.comparable(r["params"]): continue
    d = [x for x in F.compare(F.summarize(o), F.reference(w["backend"], 2, r, memo)) if not x.startswith("TIE")]
    n += 1
    if d: print(d[:2])
print("compared", n, F.leaks(llm))
