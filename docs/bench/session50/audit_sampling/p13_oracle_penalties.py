"""Greedy + presence/frequency penalty/logit_bias: check each chosen token is the argmax of
(raw logprob - penalties + bias) over the reported top-20 raw logprobs (logprobs are pre-penalty)."""
from h import *
from collections import Counter
CO="/v1/completions"
def check(extra, prompt="The the the the the the cat cat cat", n=24):
    s,j=post(CO,{"prompt":prompt,"max_tokens":n,"temperature":0,"logprobs":20,**extra})
    if s!=200: print(extra, s, j); return
    L=j["choices"][0]["logprobs"]
    pp=extra.get("presence_penalty",0); fp=extra.get("frequency_penalty",0)
    # token strings -> need ids; map via top_logprobs strings: use strings as keys (ambiguity ok for test)
    counts=Counter(); bad=0
    for i,(tok,top) in enumerate(zip(L["tokens"],L["top_logprobs"])):
        score={t: lp - (fp*counts[t] + (pp if counts[t] else 0)) for t,lp in top.items()}
        best=max(score,key=score.get)
        if best!=tok and abs(score[best]-score.get(tok,-1e9))>1e-3:
            bad+=1
            if bad<=3: print("   step",i,"chose",repr(tok),"oracle",repr(best), round(score.get(tok,-99),3), round(score[best],3))
        counts[tok]+=1
    print(extra, "mismatches:", bad, "text:", repr(j["choices"][0]["text"][:80]))
check({})
check({"presence_penalty":2})
check({"frequency_penalty":2})
check({"frequency_penalty":-2})
check({"presence_penalty":1,"frequency_penalty":0.5})
check({"frequency_penalty":1.0}, prompt="List: apple, apple, apple, apple,")
