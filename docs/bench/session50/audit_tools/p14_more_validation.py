from h import *
CURL = "http://127.0.0.1:8850/v1/completions"
cases = [
 ("chat", {"response_format": {"type": "json_schema", "json_schema": {"name": "x", "strict": "true", "schema": {"type": "object"}}}}),
 ("chat", {"response_format": {"type": 1}}),
 ("chat", {"response_format": None}),
 ("chat", {"tools": [{"type": "function", "function": {"name": "a", "description": 5}}]}),
 ("chat", {"tools": None, "tool_choice": None}),
 ("chat", {"tools": [W], "function_call": "auto"}),
 ("chat", {"tools": [W], "tool_choice": "none", "function_call": "none"}),
 ("chat", {"tools": [W], "tool_choice": "required", "function_call": "auto"}),
 ("chat", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [{"id": 5, "type": "function", "function": {"name": "a", "arguments": "{}"}}]}]}),
 ("chat", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "index": 0, "function": {"name": "a", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "a", "content": "r"}]}),
 ("chat", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "a", "arguments": "{}"}}, {"id": "b", "type": "function", "function": {"name": "a", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "a", "content": "r"}, {"role": "user", "content": "ok"}]}),
 ("chat", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "a", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "a", "content": "r"}, {"role": "tool", "tool_call_id": "a", "content": "r2"}]}),
 ("chat", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "a", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "a", "content": None}]}),
 ("chat", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "", "tool_calls": [{"id": "a", "type": "function", "function": {"name": "a", "arguments": "{}"}}]}]}),
 ("chat", {"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": None, "tool_calls": [{"id": "a", "type": "function", "function": {"name": "a b", "arguments": "{}"}}]}]}),
 ("chat", {"messages": [{"role": "tool", "tool_call_id": "a", "content": "x"}]}),
 ("comp", {"response_format": {"type": "json_object"}, "prompt": "JSON:"}),
 ("comp", {"tools": [W], "prompt": "x"}),
 ("comp", {"tool_choice": "required", "prompt": "x"}),
 ("comp", {"guided_choice": ["yes", "no"], "prompt": "Is the sky blue?", "n": 2, "temperature": 1, "seed": 1}),
 ("comp", {"parallel_tool_calls": False, "prompt": "x"}),
]
for ep, b in cases:
    body = {"messages": MSG, "max_tokens": 12, **b} if ep == "chat" else {"max_tokens": 12, **b}
    s, j = post(body, URL if ep == "chat" else CURL)
    if s == 200:
        print(s, ep, json.dumps(b)[:110], "->", json.dumps([c.get("message", c.get("text")) for c in j["choices"]])[:160], [c["finish_reason"] for c in j["choices"]])
    else:
        print(s, ep, json.dumps(b)[:110], "->", j["error"]["param"], j["error"]["message"][:150])
