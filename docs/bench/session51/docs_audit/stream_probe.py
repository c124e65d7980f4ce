import json, sys, httpx
B = f"http://127.0.0.1:{sys.argv[1]}"
c = httpx.Client(timeout=120)
def sse(path, body):
    out = []
    with c.stream("POST", B+path, json=body) as r:
        print("status", r.status_code, r.headers.get("content-type"))
        for line in r.iter_lines():
            if line.startswith("data: "):
                d = line[6:]
                out.append(d if d == "[DONE]" else json.loads(d))
            elif line.strip():
                out.append(("OTHER", line))
    return out
M = [{"role": "user", "content": "hi"}]
ev = sse("/v1/chat/completions", {"messages": M, "max_tokens": 3, "stream": True, "stream_options": {"include_usage": True}})
for e in ev: print(json.dumps(e)[:300])
print("---- completions")
ev = sse("/v1/completions", {"prompt": "a", "max_tokens": 3, "stream": True, "stream_options": {"include_usage": True}, "n": 2})
for e in ev: print(json.dumps(e)[:300])
print("---- tools streamed required")
weather = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}
ev = sse("/v1/chat/completions", {"messages": M, "max_tokens": 40, "stream": True, "tools": [weather], "tool_choice": "required", "parallel_tool_calls": False})
for e in ev[:4] + ev[-3:]: print(json.dumps(e)[:300])
print("---- tools non-streamed named")
r = c.post(B+"/v1/chat/completions", json={"messages": M, "max_tokens": 40, "tools": [weather], "tool_choice": {"type": "function", "function": {"name": "get_weather"}}})
print(json.dumps(r.json())[:600])
print("---- tools auto")
r = c.post(B+"/v1/chat/completions", json={"messages": M, "max_tokens": 10, "tools": [weather], "tool_choice": "auto"})
print(json.dumps(r.json())[:600])
print("---- tools strict open")
w2 = json.loads(json.dumps(weather)); w2["function"]["strict"] = True
r = c.post(B+"/v1/chat/completions", json={"messages": M, "max_tokens": 10, "tools": [w2]})
print(r.status_code, r.text[:300])
print("---- tool call cut by max_tokens")
r = c.post(B+"/v1/chat/completions", json={"messages": M, "max_tokens": 8, "tools": [weather], "tool_choice": "required"})
print(json.dumps(r.json()["choices"][0])[:600])
print("---- tool call cut by max_tokens 2")
r = c.post(B+"/v1/chat/completions", json={"messages": M, "max_tokens": 2, "tools": [weather], "tool_choice": "required"})
print(json.dumps(r.json()["choices"][0])[:600])
print("---- tool result")
msgs = M + [{"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": "{\"city\": \"Paris\"}"}}]},
            {"role": "tool", "tool_call_id": "c1", "content": "sunny"}]
r = c.post(B+"/tokenize", json={"messages": msgs, "tools": [weather], "add_generation_prompt": True, "return_token_strs": False})
ids = r.json()["tokens"]
print(c.post(B+"/detokenize", json={"tokens": ids}).json()["prompt"][-500:])
r = c.post(B+"/v1/chat/completions", json={"messages": msgs[:2] + [{"role": "tool", "tool_call_id": "zz", "content": "x"}], "tools": [weather], "max_tokens": 1})
print("bad tool_call_id", r.status_code, r.text[:300])
