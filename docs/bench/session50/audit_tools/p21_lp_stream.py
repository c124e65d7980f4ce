from h import *
b = {"messages": MSG, "tools": [W], "tool_choice": "required", "parallel_tool_calls": False, "logprobs": True, "top_logprobs": 2}
s, j = post(b)
ns = [(x["token"], round(x["logprob"], 4)) for x in j["choices"][0]["logprobs"]["content"]]
s, ch = stream(b)
st = [(x["token"], round(x["logprob"], 4)) for c in ch for cc in c["choices"] if cc.get("logprobs") for x in cc["logprobs"]["content"]]
print("same:", ns == st, len(ns), len(st)); print(ns[:6])
# chunks whose delta is empty but logprobs present
print("empty-delta chunks with logprobs:", sum(1 for c in ch for cc in c["choices"] if not cc["delta"] and cc.get("logprobs")))
