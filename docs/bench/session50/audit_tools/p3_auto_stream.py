from h import *
def ac(i, city): return {"role":"assistant","content":None,"tool_calls":[{"id":f"c{i}","type":"function","function":{"name":"get_weather","arguments":json.dumps({"city":city})}}]}
M = [{"role":"user","content":"Weather in Paris?"}, ac(1,"Paris"),
     {"role":"user","content":"Weather in Rome?"}, ac(2,"Rome"),
     {"role":"user","content":"Weather in Berlin?"}]
def cmp(label, extra):
    b = {"messages": M, "tools": [W, T], "max_tokens": 60, **extra}
    s, j = post(b)
    if s != 200: show(label + f" status {s}", j); return
    s2, ch = stream(b)
    a = assemble(ch)
    for c in j["choices"]:
        i = c["index"]
        ns = (c["message"]["content"] or "", [(t["function"]["name"], t["function"]["arguments"]) for t in c["message"].get("tool_calls") or []], c["finish_reason"])
        show(f"{label} ns[{i}]", ns)
    if len(j["choices"]) == 1:
        st = (a["content"], [(t["name"], t["arguments"]) for t in a["calls"]], a["finish"].get(0))
        print("   same:", st == ns)
        if st != ns: show("   st", st)
    return j, ch
cmp("auto", {})
cmp("auto par=False", {"parallel_tool_calls": False})
cmp("none", {"tool_choice": "none"})
cmp("auto max_tokens=12", {"max_tokens": 12})
cmp("auto max_tokens=5", {"max_tokens": 5})
cmp("auto stop=Ber", {"stop": ["Ber"]})
cmp("auto stop=</tool_call>", {"stop": ["</tool_call>"]})
cmp("auto stop=<tool_call>", {"stop": ["<tool_call>"]})
cmp("auto n=2 seeded", {"n": 2, "temperature": 0.8, "seed": 7})
r = cmp("auto logprobs", {"logprobs": True, "top_logprobs": 1})
j, ch = r
lp = j["choices"][0]["logprobs"]["content"]
print("logprob tokens:", "".join(x["token"] for x in lp)[:200])
