import httpx, sys, json
U = "http://127.0.0.1:%s/v1/chat/completions"
uri = "https://ex.com/r.json"
cases = {
 "ptr-abs": {"$id": uri, "$defs": {"A": {"type": "integer"}}, "type": "object", "properties": {"a": {"$ref": f"{uri}#/$defs/A"}}, "required": ["a"]},
 "anchor-abs": {"$id": uri, "$defs": {"A": {"$anchor": "aa", "type": "integer"}}, "type": "object", "properties": {"a": {"$ref": f"{uri}#aa"}}, "required": ["a"]},
 "anchor-plain": {"$id": uri, "$defs": {"A": {"$anchor": "aa", "type": "integer"}}, "type": "object", "properties": {"a": {"$ref": "#aa"}}, "required": ["a"]},
 "id-with-empty-frag": {"$id": uri + "#", "$defs": {"A": {"type": "integer"}}, "type": "object", "properties": {"a": {"$ref": f"{uri}#/$defs/A"}}, "required": ["a"]},
 "relative": {"$id": uri, "$defs": {"A": {"type": "integer"}}, "type": "object", "properties": {"a": {"$ref": "r.json#/$defs/A"}}, "required": ["a"]},
 "root-self": {"$id": uri, "type": "object", "properties": {"a": {"type": "integer"}, "next": {"anyOf": [{"type": "null"}, {"$ref": uri}]}}, "required": ["a", "next"]},
 "root-self-hash": {"$id": uri, "type": "object", "properties": {"a": {"type": "integer"}, "next": {"anyOf": [{"type": "null"}, {"$ref": uri + "#"}]}}, "required": ["a", "next"]},
}
for name, params in cases.items():
    alone = httpx.post(U % sys.argv[1], json={"messages": [{"role": "user", "content": "a"}], "max_tokens": 3, "response_format": {"type": "json_schema", "json_schema": {"name": "n", "schema": params}}}, timeout=60)
    body = {"messages": [{"role": "user", "content": "a"}], "max_tokens": 40, "tools": [{"type": "function", "function": {"name": "f", "parameters": params}}], "tool_choice": "required"}
    outs = []
    for port in sys.argv[1:]:
        r = httpx.post(U % port, json=body, timeout=60)
        outs.append(r.status_code if r.status_code == 200 else (r.status_code, r.json()["error"]["message"][:90]))
    print(f"{name:20} alone={alone.status_code} tools={outs}")
