"""top_k / top_p / min_p effect check: every sampled token must lie in the filtered set computed
from the raw logprobs (temperature 1, so raw = sampling distribution)."""
from h import *
import math
CO="/v1/completions"
def run(extra, check, prompt="Once upon a time"):
    s,j=post(CO,{"prompt":prompt,"max_tokens":20,"temperature":1.0,"n":6,"seed":123,"logprobs":20,**extra})
    bad=0; total=0
    for c in j["choices"]:
        L=c["logprobs"]
        for tok,lp,top in zip(L["tokens"],L["token_logprobs"],L["top_logprobs"]):
            total+=1
            if not check(tok,lp,top): bad+=1
    print(extra, "violations:", bad, "/", total)
def in_topk(k):
    return lambda tok,lp,top: lp >= sorted(top.values(),reverse=True)[k-1]-1e-6
def in_topp(p):
    def f(tok,lp,top):
        vals=sorted(top.values(),reverse=True); cum=0; 
        for v in vals:
            cum+=math.exp(v)
            if cum>=p-1e-6: return lp>=v-1e-6
        return True  # set extends beyond top-20: cannot decide
    return f
def in_minp(m):
    return lambda tok,lp,top: math.exp(lp) >= m*math.exp(max(top.values()))-1e-6
run({}, lambda *a: True)
run({"top_k":2}, in_topk(2))
run({"top_k":5}, in_topk(5))
run({"top_p":0.5}, in_topp(0.5))
run({"top_p":0.8}, in_topp(0.8))
run({"min_p":0.3}, in_minp(0.3))
run({"min_p":0.1}, in_minp(0.1))
