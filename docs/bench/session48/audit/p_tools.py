from h import *
def t(label, r, n=300):
    s, j, dt = r
    if s == 200:
        c = j["choices"][0]; m = c.get("message", {})
        print(f"[200] {dt:.2f}s {label}: content={short(m.get('content'), 120)!s} tool_calls={short(m.get('tool_calls'), 300)} fr={c['finish_reason']} keys={list(m)}")
    else:
        show(label, r, n)
f = {"type": "function", "function": {"name": "get", "description": "d", "parameters": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}}}
g = {"type": "function", "function": {"name": "put", "parameters": {"type": "object", "properties": {}}}}
t("tools auto", chat(tools=[f], max_tokens=40))
t("tools required", chat(tools=[f], tool_choice="required", max_tokens=40))
t("tools required 2 tools", chat(tools=[f, g], tool_choice="required", max_tokens=60))
t("tools named", chat(tools=[f, g], tool_choice={"type": "function", "function": {"name": "put"}}, max_tokens=40))
t("tools named unknown", chat(tools=[f], tool_choice={"type": "function", "function": {"name": "nope"}}))
t("tools none", chat(tools=[f], tool_choice="none", max_tokens=10))
t("tool_choice required no tools", chat(tool_choice="required"))
t("tool_choice auto no tools", chat(tool_choice="auto"))
t("tool_choice none no tools", chat(tool_choice="none"))
t("tool_choice bogus", chat(tools=[f], tool_choice="any"))
t("tool_choice named w/ extra", chat(tools=[f], tool_choice={"type": "function", "function": {"name": "get"}, "x": 1}))
t("tool_choice allowed_tools (openai new)", chat(tools=[f], tool_choice={"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [{"type": "function", "function": {"name": "get"}}]}}))
t("tool_choice custom", chat(tools=[f], tool_choice={"type": "custom", "custom": {"name": "get"}}))
t("tool type custom", chat(tools=[{"type": "custom", "custom": {"name": "c"}}]))
t("tools no parameters", chat(tools=[{"type": "function", "function": {"name": "noparams"}}], tool_choice="required", max_tokens=30))
t("tools strict true non-closed", chat(tools=[{"type": "function", "function": {**f["function"], "strict": True}}], tool_choice="required", max_tokens=30))
t("tools dup names", chat(tools=[f, f], max_tokens=10))
t("tools name with spaces", chat(tools=[{"type": "function", "function": {"name": "a b"}}], max_tokens=10))
t("tools name empty", chat(tools=[{"type": "function", "function": {"name": ""}}], max_tokens=10))
t("tools params non-object", chat(tools=[{"type": "function", "function": {"name": "a", "parameters": {"type": "string"}}}], max_tokens=10))
t("parallel false", chat(tools=[f, g], tool_choice="required", parallel_tool_calls=False, max_tokens=60))
t("parallel false no tools", chat(parallel_tool_calls=False))
t("parallel 'x'", chat(parallel_tool_calls="x"))
t("tools + response_format", chat(tools=[f], response_format={"type": "json_object"}))
t("tools none + response_format", chat(tools=[f], tool_choice="none", response_format={"type": "json_object"}, max_tokens=10))
t("tools auto + guided_choice", chat(tools=[f], guided_choice=["a"]))
t("functions legacy", chat(functions=[{"name": "get", "parameters": {"type": "object"}}]))
t("function_call auto (no functions)", chat(function_call="auto"))
t("function_call none with tools required?", chat(tools=[f], tool_choice="required", function_call="none", max_tokens=40))
t("function_call auto + tools none", chat(tools=[f], tool_choice="none", function_call="auto", max_tokens=5))
# streaming tool calls
s, ev = sse("/v1/chat/completions", {"messages": [{"role": "user", "content": "hi"}], "tools": [f], "tool_choice": "required", "max_tokens": 40, "temperature": 0, "stream": True})
print("stream tools", s); [print("  ", short(e, 400)) for e in ev]
