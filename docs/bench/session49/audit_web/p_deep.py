import httpx, json
c = httpx.Client(base_url="http://127.0.0.1:18201", timeout=120)
U = [{"role":"user","content":"hi"}]
def nested_schema(d):
    s = {"type":"string"}
    for _ in range(d): s = {"type":"object","properties":{"a":s}}
    return s
for d in (200, 900):
    tools=[{"type":"function","function":{"name":"f","parameters":nested_schema(d)}}]
    for ep, extra in (("/tokenize", {}), ("/v1/chat/completions", {"max_tokens":2})):
        try:
            r = c.post(ep, content=json.dumps({"messages":U,"tools":tools, **extra}), headers={"content-type":"application/json"})
            print(f"== depth {d} {ep}: {r.status_code} {r.text[:220]}")
        except Exception as e:
            print(f"== depth {d} {ep}: EXC {e!r}")
    deep = "x"
    for _ in range(d): deep = [deep]
    r = c.post("/v1/completions", content=json.dumps({"prompt":"hi","max_tokens":1,"logit_bias":{"1":deep}}), headers={"content-type":"application/json"})
    print(f"== depth {d} logit_bias value nested: {r.status_code} {r.text[:200]}")
    r = c.post("/v1/chat/completions", content=json.dumps({"messages":U,"max_tokens":1,"response_format":{"type":"json_schema","json_schema":{"name":"n","schema":nested_schema(d)}}}), headers={"content-type":"application/json"})
    print(f"== depth {d} response_format schema: {r.status_code} {r.text[:200]}")
print("health:", c.get("/health").text)
