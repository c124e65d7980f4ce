from h import *
import json
CH="/v1/chat/completions"; CO="/v1/completions"
M=[{"role":"user","content":"Hi"}]
base={"messages":M,"temperature":0}
for kv in [{"max_tokens":3,"max_completion_tokens":3},{"max_tokens":3,"max_completion_tokens":4},{"max_completion_tokens":3},{"max_completion_tokens":0},{"max_tokens":-1},{"n_predict":-1,"max_tokens":3},{"n_predict":-1},{"max_tokens":8200},{"max_tokens":8160},{"max_tokens":None,"max_completion_tokens":3},{"n_predict":-2}]:
    r=post(CH,{**base,**kv})
    if r[0]==200: print(kv,200,r[1]["usage"],r[1]["choices"][0]["finish_reason"])
    else: show(str(kv),r)
show("co default max_tokens", post(CO,{"prompt":"Once upon a time","temperature":0}))
show("co max_completion_tokens", post(CO,{"prompt":"Once upon a time","temperature":0,"max_completion_tokens":2}))
# stream_options
for so in [{"include_usage":True},{"include_usage":False},{"continuous_usage_stats":True},{"continuous_usage_stats":False},{"include_obfuscation":True},{"foo":1},{}]:
    r=stream(CH,{**base,"max_tokens":3,"stream":True,"stream_options":so})
    evs=r[1]
    if evs and isinstance(evs[0],dict) and "error" in evs[0]: print(so, r[0], evs[0])
    else: print(so, r[0], [ (e.get("usage","-") if e!="[DONE]" else "DONE") for e in evs][-3:], len(evs))
show("so without stream", post(CH,{**base,"max_tokens":3,"stream_options":{"include_usage":True}}))
show("so with stream false", post(CH,{**base,"max_tokens":3,"stream":False,"stream_options":{"include_usage":True}}))
show("so null no stream", post(CH,{**base,"max_tokens":3,"stream_options":None}))
# usage chunk n=2 completions
r=stream(CO,{"prompt":"Hi","max_tokens":3,"n":2,"stream":True,"stream_options":{"include_usage":True}}); print("co n2 usage", r[1][-2])
# no-ops
noop={"user":"u1","metadata":{"a":"b"},"store":True,"store2":None,"service_tier":"auto","prediction":None,"modalities":["text"],"audio":None,"web_search_options":None}
noop.pop("store2")
show("noops", post(CH,{**base,"max_tokens":3,**noop}))
for kv in [{"service_tier":"bogus"},{"store":"yes"},{"metadata":{"a":1}},{"metadata":{str(i):"x" for i in range(17)}},{"prediction":{"type":"content","content":"x"}},{"modalities":["text","audio"]},{"modalities":[]},{"audio":{"voice":"alloy","format":"wav"}},{"web_search_options":{}},{"user":5},{"foo":1},{"Temperature":0.5},{"max_tokens ":3},{"reasoning_effort":"low"},{"verbosity":"low"},{"parallel_tool_calls":False},{"tool_choice":"none"},{"tool_choice":"required"},{"tools":[]},{"functions":[]},{"seed":None},{"n":None},{"ignore_eos":None},{"logprobs":None}]:
    show(str(kv)[:60], post(CH,{**base,"max_tokens":3,**kv}))
for kv in [{"metadata":{"a":"b"}},{"store":False},{"service_tier":"auto"},{"user":"x"},{"modalities":["text"]}]:
    show("CO "+str(kv), post(CO,{"prompt":"Hi","max_tokens":3,**kv}))
