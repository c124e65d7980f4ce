# an assistant message whose two tool calls share one id, answered by one tool message: accepted (200)
from common import *
U = [{"role": "user", "content": "What's the weather in Paris and Rome?"}]
hist = U + [{"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}},
    {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Rome\"}"}}]},
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]
r = post("/v1/chat/completions", {"model": M, "messages": hist, "tools": [WEATHER], "max_tokens": 5, "temperature": 0})
print("status", r.status_code, r.text[:300])
t = post("/tokenize", {"model": M, "messages": hist, "tools": [WEATHER]}).json()
print(post("/detokenize", {"model": M, "tokens": t["tokens"]}).json()["prompt"].split("<|im_start|>user")[-2:])
# the same with two distinct ids but only one answered -> 400 (for contrast)
hist2 = [dict(m) for m in hist]; hist2[1] = {"role": "assistant", "content": None, "tool_calls": [dict(hist[1]["tool_calls"][0]), dict(hist[1]["tool_calls"][1], id="c2")]}
r = post("/v1/chat/completions", {"model": M, "messages": hist2, "tools": [WEATHER], "max_tokens": 5, "temperature": 0})
print("distinct ids, one answered:", r.status_code, r.json().get("error", {}).get("message"))
