from h import *
import json
CH="/v1/chat/completions"; CO="/v1/completions"
print("n=3 unseeded distinct:", ctext(CO,{"prompt":"Once upon a time","max_tokens":8,"n":3}))
print("unseeded calls differ:", ctext(CO,{"prompt":"Once upon a time","max_tokens":8}), ctext(CO,{"prompt":"Once upon a time","max_tokens":8}))
W={"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}
M=[{"role":"user","content":"What's the weather in Paris?"}]
for tc in ["auto","required",{"type":"function","function":{"name":"get_weather"}},"none"]:
    b={"messages":M,"tools":[W],"tool_choice":tc,"max_tokens":40,"temperature":0}
    s,j=post(CH,b); m=j["choices"][0]
    s2,evs=stream(CH,{**b,"stream":True})
    calls={}; content=""; fin=None
    for e in evs:
        if e=="[DONE]": continue
        for c in e["choices"]:
            d=c["delta"]; content+=d.get("content") or ""
            for t in d.get("tool_calls") or []:
                x=calls.setdefault(t["index"],{"name":None,"arguments":""})
                if t.get("function",{}).get("name"): x["name"]=t["function"]["name"]
                x["arguments"]+=t["function"].get("arguments","")
            fin=c.get("finish_reason") or fin
    nc=[{"name":t["function"]["name"],"arguments":t["function"]["arguments"]} for t in m["message"].get("tool_calls") or []]
    print(tc, m["finish_reason"], repr(m["message"]["content"])[:60], nc, "| stream same:", [calls[k] for k in sorted(calls)]==nc, (content or None)==m["message"]["content"], fin==m["finish_reason"])
show("tools on completions", post(CO,{"prompt":"x","max_tokens":2,"tools":[W]}))
show("parallel_tool_calls no tools", post(CH,{"messages":M,"max_tokens":2,"parallel_tool_calls":False}))
show("tool_choice none no tools", post(CH,{"messages":M,"max_tokens":2,"tool_choice":"none"}))
show("tool_choice auto no tools", post(CH,{"messages":M,"max_tokens":2,"tool_choice":"auto"}))
show("tool_choice named no tools", post(CH,{"messages":M,"max_tokens":2,"tool_choice":{"type":"function","function":{"name":"x"}}}))
show("tool_choice named unknown", post(CH,{"messages":M,"max_tokens":2,"tools":[W],"tool_choice":{"type":"function","function":{"name":"x"}}}))
show("tools + response_format", post(CH,{"messages":M,"max_tokens":2,"tools":[W],"response_format":{"type":"json_object"}}))
show("tools + tool_choice none + response_format", post(CH,{"messages":M,"max_tokens":5,"tools":[W],"tool_choice":"none","response_format":{"type":"json_object"}}))
