import httpx, json
U = "http://127.0.0.1:18901"
TOOLS = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}]
M = [{"role": "user", "content": "hi"}]
def post(body, path="/v1/chat/completions"):
    r = httpx.post(U + path, json=body, timeout=120)
    print(r.status_code, r.text[:400])
    return r
# a response_format schema that fails to compile, beside tools
bad = {"type": "object", "properties": {"a": {"type": "string", "pattern": "(("}}}
fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": bad}}
post({"messages": M, "response_format": fmt, "max_tokens": 5})
post({"messages": M, "tools": TOOLS, "response_format": fmt, "max_tokens": 5})
# deep answer schema
def nested(n):
    s = {"type": "integer"}
    for _ in range(n):
        s = {"type": "object", "properties": {"a": s}}
    return s
for n in (100, 200, 400):
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": nested(n)}}
    print("depth", n)
    post({"messages": M, "response_format": fmt, "max_tokens": 5})
    post({"messages": M, "tools": TOOLS, "response_format": fmt, "max_tokens": 5})
# json_object beside tools
post({"messages": M, "tools": TOOLS, "response_format": {"type": "json_object"}, "max_tokens": 30, "seed": 1})
