from h import *
W = [{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]
M = [{"role":"user","content":"What is the weather in Paris and in Rome?"}]
# streaming echo + prompt list + n=2 indices
s, ch = stream("/v1/completions", {"prompt":["Hi","Hello there"],"n":2,"echo":True,"max_tokens":3,"seed":1,"logprobs":1})
idx = {}
for c in ch:
    if c=="[DONE]": continue
    for x in c["choices"]:
        o = idx.setdefault(x["index"], {"text":"","tokens":[],"offs":[], "fin":None})
        o["text"] += x["text"]; 
        if x["logprobs"]: o["tokens"] += x["logprobs"]["tokens"]; o["offs"] += x["logprobs"]["text_offset"]
        if x["finish_reason"]: o["fin"]=x["finish_reason"]
s2, j = comp({"prompt":["Hi","Hello there"],"n":2,"echo":True,"max_tokens":3,"seed":1,"logprobs":1})
for c in j["choices"]:
    o = idx[c["index"]]
    print("echo stream idx", c["index"], o["text"]==c["text"], o["tokens"]==c["logprobs"]["tokens"], o["offs"]==c["logprobs"]["text_offset"], repr(c["text"]))
# chat truncate_prompt_tokens
s,j = chat({"truncate_prompt_tokens":5,"max_tokens":3}); show("chat truncate 5", [s, j.get("usage") if s==200 else j])
# tools streaming n=2 with logprobs
b = {"messages":M,"tools":W,"tool_choice":"auto","n":2,"seed":3,"temperature":0.7,"logprobs":True,"max_tokens":80}
s,j = chat(dict(b))
s2,ch = stream("/v1/chat/completions", dict(b))
agg = {}
for c in ch:
    if c=="[DONE]": continue
    for x in c["choices"]:
        o = agg.setdefault(x["index"], {"lp":[], "content":"", "calls":{}})
        if x.get("logprobs") and x["logprobs"].get("content"): o["lp"] += [e["token"] for e in x["logprobs"]["content"]]
        o["content"] += x["delta"].get("content") or ""
        for tc in x["delta"].get("tool_calls") or []:
            e = o["calls"].setdefault(tc["index"], {"id":None,"name":None,"args":""})
            if tc.get("id"): e["id"]=tc["id"]
            if tc.get("function",{}).get("name"): e["name"]=tc["function"]["name"]
            e["args"] += tc["function"].get("arguments","")
for c in j["choices"]:
    o = agg[c["index"]]
    ns_lp = [e["token"] for e in (c["logprobs"] or {}).get("content") or []]
    print("tools n2", c["index"], c["finish_reason"], "calls", [(t["function"]["name"], t["function"]["arguments"]) for t in c["message"].get("tool_calls") or []],
          "| stream calls", [(v["name"], v["args"]) for v in o["calls"].values()], "| lp equal", ns_lp == o["lp"], len(ns_lp), "| content", repr(c["message"]["content"]), repr(o["content"]))
    print("   lp tokens joined:", repr("".join(ns_lp))[:300])
