from h import *
CO="/v1/completions"; CH="/v1/chat/completions"
b={"prompt":["The capital of France is","Hi"],"max_tokens":4,"temperature":0.7,"seed":3,"n":2,"echo":True,"logprobs":1}
s,j=post(CO,b); s2,evs=stream(CO,{**b,"stream":True})
agg={}
for e in evs:
    if e=="[DONE]": continue
    for c in e["choices"]:
        d=agg.setdefault(c["index"],{"text":"","lp":{"tokens":[],"token_logprobs":[],"top_logprobs":[],"text_offset":[]}})
        d["text"]+=c["text"]
        if c.get("logprobs"):
            for k in d["lp"]: d["lp"][k]+=c["logprobs"][k]
print("echo n2 list stream==non:", all(agg[c["index"]]["text"]==c["text"] and agg[c["index"]]["lp"]==c["logprobs"] for c in j["choices"]), len(j["choices"]))
show("n_predict 0", post(CO,{"prompt":"Hi","n_predict":0}))
show("max1 min1", post(CO,{"prompt":"Hi","max_tokens":1,"min_tokens":1}))
show("temp 2.0000001", post(CO,{"prompt":"Hi","max_tokens":1,"temperature":2.0000001}))
show("stop 5 entries", post(CO,{"prompt":"Hi","max_tokens":1,"stop":["a","b","c","d","e"]}))
show("chat n_predict", post(CH,{"messages":[{"role":"user","content":"Hi"}],"n_predict":3}))
