"""Run against a server started with --stream-interval 3: streamed == non-streamed for stop strings, logprobs, echo, n, min_tokens."""
from h import *
import json
CH="/v1/chat/completions"; CO="/v1/completions"
P="The capital of France is"
def lp_concat(evs):
    out={}
    for e in evs:
        if e=="[DONE]" or "choices" not in e: continue
        for c in e["choices"]:
            if c.get("logprobs"):
                d=out.setdefault(c["index"],{"tokens":[],"token_logprobs":[],"top_logprobs":[],"text_offset":[]})
                for k in d: d[k]+=c["logprobs"][k]
    return [out[k] for k in sorted(out)]
cases=[{"max_tokens":12,"stop":".\n\nThe"},{"max_tokens":12,"stop":"answer"},{"max_tokens":12,"stop":["\n"],"logprobs":2},{"max_tokens":12,"logprobs":1,"echo":True},{"max_tokens":12,"n":3,"seed":4,"temperature":1,"stop":"e"},{"max_tokens":12,"n":2,"seed":4,"temperature":1,"logprobs":1},{"max_tokens":12,"stop_token_ids":[504],"logprobs":0},{"max_tokens":12,"stop":"Paris","min_tokens":3},{"max_tokens":7,"stop":"The"}]
for b in cases:
    b={"prompt":P,"temperature":0,**b}
    s,j=post(CO,b); s2,evs=stream(CO,{**b,"stream":True,"stream_options":{"include_usage":True}})
    t=[c["text"] for c in j["choices"]]; f=[c["finish_reason"] for c in j["choices"]]
    st={};sf={}
    for e in evs:
        if e=="[DONE]" or "choices" not in e: continue
        for c in e["choices"]:
            st[c["index"]]=st.get(c["index"],"")+c["text"]
            if c["finish_reason"]: sf[c["index"]]=c["finish_reason"]
    st=[st[k] for k in sorted(st)]; sf=[sf[k] for k in sorted(sf)]
    lpok = "-" if "logprobs" not in b else (lp_concat(evs)==[c["logprobs"] for c in j["choices"]])
    print({k:v for k,v in b.items() if k!="prompt"}, "text eq:", t==st, "fin eq:", f==sf, "lp eq:", lpok, "usage eq:", evs[-2].get("usage")==j["usage"], repr(t[0][:40]))
    if t!=st: print("   N", t, "\n   S", st)
    if "logprobs" in b and lpok is False:
        print("   N", [c["logprobs"]["tokens"] for c in j["choices"]], "\n   S", [x["tokens"] for x in lp_concat(evs)])
M=[{"role":"user","content":"Name three colors."}]
for b in [{"max_tokens":20,"stop":"\n"},{"max_tokens":20,"logprobs":True,"top_logprobs":2,"stop":","}]:
    b={"messages":M,"temperature":0,**b}
    a=ctext(CH,b); s=stext(CH,{**b,"stream":True})
    print("chat",b.get("stop"), a[1]==s[1], a[1], s[1])
W={"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}
b={"messages":[{"role":"user","content":"Weather in Paris?"}],"tools":[W],"tool_choice":"required","parallel_tool_calls":False,"max_tokens":40,"temperature":0}
s,j=post(CH,b); s2,evs=stream(CH,{**b,"stream":True})
args="".join(t["function"].get("arguments","") for e in evs if e!="[DONE]" for c in e["choices"] for t in (c["delta"].get("tool_calls") or []))
print("tools si3:", j["choices"][0]["message"]["tool_calls"][0]["function"]["arguments"]==args, args)
