from h import *
W = [{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]
T = [{"type":"function","function":{"name":"get_time","parameters":{"type":"object","properties":{"tz":{"type":"string"}},"required":["tz"]}}}]
M = [{"role":"user","content":"What is the weather in Paris?"}]
named = {"type":"function","function":{"name":"get_weather"}}
def ns(b):
    s, j = chat(dict(b))
    if s != 200: return s, j
    return s, [(c["finish_reason"], c["message"].get("content"), c["message"].get("tool_calls")) for c in j["choices"]]
def st(b):
    s, ch = stream("/v1/chat/completions", dict(b))
    if s != 200: return s, ch
    out = {}
    for c in ch:
        if c == "[DONE]": continue
        for x in c["choices"]:
            o = out.setdefault(x["index"], {"content":[], "calls":{}, "finish":None, "role":None})
            d = x["delta"]
            if "role" in d: o["role"] = d["role"]
            if "content" in d: o["content"].append(d["content"])
            for tc in d.get("tool_calls") or []:
                e = o["calls"].setdefault(tc["index"], {"name":None,"args":""})
                if tc.get("function",{}).get("name"): e["name"] = tc["function"]["name"]
                e["args"] += tc.get("function",{}).get("arguments","")
            if x["finish_reason"]: o["finish"] = x["finish_reason"]
    return s, out
for mt in [3, 6, 12, 40]:
    for tc in ["required", named]:
        b = {"messages":M,"tools":W+T,"tool_choice":tc,"max_tokens":mt,"temperature":0}
        show(f"ns mt={mt} tc={tc}", ns(b)); show(f"st mt={mt} tc={tc}", st(b))
b = {"messages":M,"tools":W,"tool_choice":named,"temperature":0,"n":2}
show("named n=2", ns(b)); show("named n=2 st", st(b))
b = {"messages":M,"tools":W,"tool_choice":"required","temperature":0, "stop":["get_weather"]}
show("required stop", ns(b)); show("required stop st", st(b))
# tools + response_format auto
RF = {"type":"json_schema","json_schema":{"name":"a","schema":{"type":"object","properties":{"answer":{"type":"string"}},"required":["answer"],"additionalProperties":False},"strict":True}}
for m in [M, [{"role":"user","content":"Say hello in JSON"}]]:
    b = {"messages":m,"tools":W,"response_format":RF,"temperature":0,"max_tokens":60}
    show("tools+rf", ns(b)); show("tools+rf st", st(b))
# tool_choice none / auto without tools
show("tc none no tools", ns({"tool_choice":"none","max_tokens":3}))
show("ptc no tools", ns({"parallel_tool_calls":False,"max_tokens":3}))
# parallel false + required
show("ptc false required", ns({"messages":M,"tools":W+T,"tool_choice":"required","parallel_tool_calls":False,"temperature":0}))
