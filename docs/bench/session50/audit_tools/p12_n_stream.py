from h import *
def ac(i, city): return {"role":"assistant","content":None,"tool_calls":[{"id":f"c{i}","type":"function","function":{"name":"get_weather","arguments":json.dumps({"city":city})}}]}
M = [{"role":"user","content":"Weather in Paris?"}, ac(1,"Paris"),
     {"role":"user","content":"Weather in Rome?"}, ac(2,"Rome"),
     {"role":"user","content":"Weather in Berlin and in Madrid?"}]
def per_choice(chunks):
    out = {}
    for c in chunks:
        for ch in c["choices"]:
            o = out.setdefault(ch["index"], {"content": "", "calls": {}, "fr": None})
            d = ch["delta"]; o["content"] += d.get("content") or ""
            for tc in d.get("tool_calls") or []:
                e = o["calls"].setdefault(tc["index"], ["", ""])
                e[0] += tc.get("function", {}).get("name") or ""; e[1] += tc.get("function", {}).get("arguments") or ""
            if ch["finish_reason"]: o["fr"] = ch["finish_reason"]
    return {i: (o["content"], [tuple(o["calls"][k]) for k in sorted(o["calls"])], o["fr"]) for i, o in out.items()}
for label, extra in [("auto n=3", {"tool_choice": "auto"}), ("required n=3", {"tool_choice": "required"}), ("required par n=3 len", {"tool_choice": "required", "max_tokens": 45})]:
    b = {"messages": M, "tools": [W, T], "n": 3, "temperature": 1.2, "seed": 11, "max_tokens": 80, **extra}
    s, j = post(b)
    ns = {c["index"]: (c["message"]["content"] or "", [(t["function"]["name"], t["function"]["arguments"]) for t in c["message"].get("tool_calls") or []], c["finish_reason"]) for c in j["choices"]}
    s2, ch = stream({**b, "stream_options": {"include_usage": True}})
    st = per_choice(ch)
    for i in range(3):
        print(label, i, "same" if ns[i] == st.get(i) else "DIFF", json.dumps(ns[i])[:300])
        if ns[i] != st.get(i): print("   stream:", json.dumps(st.get(i))[:300])
    print("  usage ns", j["usage"], "st", ch[-1].get("usage"))
    ids = [t["id"] for c in j["choices"] for t in c["message"].get("tool_calls") or []]
    print("  ids unique:", len(ids) == len(set(ids)))
