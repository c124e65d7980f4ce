from h import *
def ac(i, city): return {"role":"assistant","content":None,"tool_calls":[{"id":f"c{i}","type":"function","function":{"name":"get_weather","arguments":json.dumps({"city":city})}}]}
m = [{"role":"user","content":"Weather in Paris?"}, ac(1,"Paris"),
     {"role":"user","content":"Weather in Rome?"}, ac(2,"Rome"),
     {"role":"user","content":"Weather in Berlin?"}]
for lb in [None, {"44": 3}, {"44": 6, "19324": 3}]:
    b = {"messages": m, "tools": [W, T], "max_tokens": 60}
    if lb: b["logit_bias"] = lb
    s, j = post(b)
    show(f"lb={lb} {s}", j["choices"][0] if s == 200 else j)
