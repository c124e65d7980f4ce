import httpx, json
U = "http://127.0.0.1:18901"
M = [{"role": "user", "content": "hi"}]
cases = {
 "draft7_anchor_id": {"$schema": "http://json-schema.org/draft-07/schema#", "type":"object","definitions":{"B":{"enum":["q"]},"A":{"$id":"#A","type":"object","properties":{"b":{"$ref":"#/definitions/B"}},"required":["b"],"additionalProperties":False}},"properties":{"x":{"$ref":"#A"}},"required":["x"],"additionalProperties":False},
 "relative_id_sub": {"type":"object","$defs":{"B":{"enum":["q"]},"A":{"$id":"a.json","type":"object","properties":{"b":{"$ref":"#/$defs/B"}},"required":["b"],"additionalProperties":False}},"properties":{"x":{"$ref":"a.json"}},"required":["x"],"additionalProperties":False},
}
for name, params in cases.items():
    tools = [{"type": "function", "function": {"name": "f", "parameters": params}}]
    body = {"messages": M, "tools": tools, "tool_choice": {"type":"function","function":{"name":"f"}}, "max_tokens": 80, "temperature": 0}
    r = httpx.post(U + "/v1/chat/completions", json=body, timeout=120)
    if r.status_code == 200:
        c = r.json()["choices"][0]
        print(name, r.status_code, c["finish_reason"], [t["function"]["arguments"] for t in c["message"].get("tool_calls") or []])
    else:
        print(name, r.status_code, r.json()["error"]["message"][:300])
    # same schema as response_format alone
    r = httpx.post(U + "/v1/chat/completions", json={"messages": M, "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": params}}, "max_tokens": 80, "temperature": 0}, timeout=120)
    print("   alone:", r.status_code, r.text[:200])
