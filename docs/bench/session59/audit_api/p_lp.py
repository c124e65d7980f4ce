from h import *
M=[{"role":"user","content":"Write a short poem about the sea."}]
def chat_join(ch):
    out={}
    for c in ch:
        if c=="[DONE]": continue
        for x in c["choices"]:
            o=out.setdefault(x["index"],{"text":"","lp":[],"finish":None})
            o["text"]+=x["delta"].get("content") or ""
            if x.get("logprobs") and x["logprobs"].get("content"): o["lp"]+=x["logprobs"]["content"]
            if x["finish_reason"]: o["finish"]=x["finish_reason"]
    return out
for b in [
  {"messages":M,"n":3,"seed":5,"temperature":1,"max_tokens":20,"logprobs":True,"top_logprobs":3,"stop":[" the"," sea"]},
  {"messages":M,"n":2,"seed":5,"temperature":0.7,"max_tokens":20,"logprobs":True,"top_logprobs":2,"post_sampling_probs":True,"top_k":3},
  {"messages":M,"n":2,"temperature":0,"max_tokens":10,"logprobs":True,"top_logprobs":4,"post_sampling_probs":True},
  {"messages":M,"n":2,"seed":1,"temperature":1,"max_tokens":20,"logprobs":True,"stream_interval":4},
]:
    s,j = chat(dict(b)); 
    ns = {c["index"]:{"text":c["message"]["content"],"lp":(c["logprobs"] or {}).get("content") or [],"finish":c["finish_reason"]} for c in j["choices"]}
    s2,ch = stream("/v1/chat/completions", dict(b, stream_options={"include_usage":True}))
    st = chat_join(ch)
    print("CASE", {k:v for k,v in b.items() if k!="messages"})
    for i in ns:
        print(" ", i, ns[i]["finish"], repr(ns[i]["text"]), "| stream equal:", ns[i]==st[i])
        if ns[i]!=st[i]: print("   stream:", repr(st[i]["text"]), st[i]["finish"], len(st[i]["lp"]), len(ns[i]["lp"]))
    print("  usage ns", j["usage"], "stream", [c for c in ch if c!="[DONE]"][-1].get("usage"))
    print("  chunks with usage key", sum(1 for c in ch if c!="[DONE]" and "usage" in c), "of", len(ch)-1)
    print("  first lp entry", json.dumps(ns[0]["lp"][:2])[:600])
