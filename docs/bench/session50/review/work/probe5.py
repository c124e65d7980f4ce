import httpx, json
U = "http://127.0.0.1:18901"
TOOLS = [{"type": "function", "function": {"name": "add", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}}}]
M = [{"role": "user", "content": "hi"}]
def nested(n):
    s = {"type": "integer"}
    for _ in range(n):
        s = {"type": "object", "properties": {"a": s}}
    return s
for n in (250, 300, 320, 330):
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": nested(n)}}
    for extra in ({}, {"tools": TOOLS}):
        try:
            data = json.dumps({"messages": M, "response_format": fmt, "max_tokens": 5, **extra})
        except RecursionError:
            print(n, "client cannot encode"); continue
        r = httpx.post(U + "/v1/chat/completions", content=data, headers={"content-type": "application/json"}, timeout=120)
        print(n, bool(extra), r.status_code, r.text[:160])
