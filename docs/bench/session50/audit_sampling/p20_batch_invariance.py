"""Greedy and seeded outputs alone vs. under concurrent load (batching)."""
from h import *
import concurrent.futures as cf
CO="/v1/completions"
prompts=["The history of Rome","Water boils at","def fibonacci(n):","My favourite food is","In 1969, astronauts"]
def req(p, seed=None):
    b={"prompt":p,"max_tokens":40,"temperature":0 if seed is None else 0.8}
    if seed is not None: b["seed"]=seed
    return ctext(CO,b)[1][0]
solo=[req(p) for p in prompts]; solo_s=[req(p,9) for p in prompts]
with cf.ThreadPoolExecutor(10) as ex:
    fs=[ex.submit(req,p) for p in prompts]+[ex.submit(req,p,9) for p in prompts]
    res=[f.result() for f in fs]
for i,p in enumerate(prompts):
    print(p[:20], "greedy same:", solo[i]==res[i], "seeded same:", solo_s[i]==res[5+i])
    if solo[i]!=res[i]: print("   ", repr(solo[i]), "\n    ", repr(res[i]))
    if solo_s[i]!=res[5+i]: print("   ", repr(solo_s[i]), "\n    ", repr(res[5+i]))
