import httpx, json, sys, importlib.util
sys.path.insert(0, ".")
spec = importlib.util.spec_from_file_location("tools_head", "tools_head.py"); th = importlib.util.module_from_spec(spec); sys.modules["tools_head"] = th; spec.loader.exec_module(th)
from roseinfer.structured import tools as tw
U = "http://127.0.0.1:18901"
M = [{"role": "user", "content": "hi"}]
cases = {
 "enum_dict_ref": {"type":"object","properties":{"k":{"enum":[{"$ref":"#/x"}]}},"required":["k"],"additionalProperties":False},
 "const_ref": {"type":"object","properties":{"k":{"const":{"$ref":"#"}}},"required":["k"],"additionalProperties":False},
 "prop_named_ref": {"type":"object","properties":{"$ref":{"type":"string","maxLength":2}},"required":["$ref"],"additionalProperties":False},
 "prop_named_id": {"type":"object","properties":{"$id":{"type":"string","maxLength":2}, "r": {"$ref": "#/properties/%24id"}},"required":["$id","r"],"additionalProperties":False},
 "tilde": {"type":"object","$defs":{"a/b":{"enum":["q"]}, "c~d": {"enum": ["w"]}},"properties":{"x":{"$ref":"#/$defs/a~1b"}, "y":{"$ref":"#/$defs/c~0d"}},"required":["x","y"],"additionalProperties":False},
 "pct": {"type":"object","$defs":{"a b":{"enum":["q"]}},"properties":{"x":{"$ref":"#/$defs/a%20b"}},"required":["x"],"additionalProperties":False},
 "anchor": {"type":"object","$defs":{"A":{"$anchor":"foo","enum":["q"]}},"properties":{"x":{"$ref":"#foo"}},"required":["x"],"additionalProperties":False},
 "dynref": {"type":"object","$defs":{"A":{"enum":["q"]}},"properties":{"x":{"$dynamicRef":"#/$defs/A"}},"required":["x"],"additionalProperties":False},
 "rootid_absref": {"$id":"https://ex.com/r.json","type":"object","$defs":{"A":{"enum":["q"]}},"properties":{"x":{"$ref":"https://ex.com/r.json#/$defs/A"}},"required":["x"],"additionalProperties":False},
 "rootid_relref": {"$id":"https://ex.com/r.json","type":"object","$defs":{"A":{"enum":["q"]}},"properties":{"x":{"$ref":"r.json#/$defs/A"}},"required":["x"],"additionalProperties":False},
 "subid": {"type":"object","$defs":{"A":{"$id":"https://ex.com/a.json","type":"object","properties":{"n":{"anyOf":[{"$ref":"#"},{"type":"null"}]}},"required":["n"],"additionalProperties":False}},"properties":{"x":{"$ref":"#/$defs/A"}},"required":["x"],"additionalProperties":False},
 "subid_byuri": {"type":"object","$defs":{"A":{"$id":"https://ex.com/a.json","enum":["q"]}},"properties":{"x":{"$ref":"https://ex.com/a.json"}},"required":["x"],"additionalProperties":False},
 "definitions": {"type":"object","definitions":{"A":{"enum":["q"]}},"properties":{"x":{"$ref":"#/definitions/A"}},"required":["x"],"additionalProperties":False},
 "schema_kw": {"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"x":{"enum":["q"]}},"required":["x"],"additionalProperties":False},
 "default_ref": {"type":"object","properties":{"x":{"enum":["q"], "default": {"$ref": "#"}}},"required":["x"],"additionalProperties":False},
}
which = sys.argv[1] if len(sys.argv) > 1 else "wt"
for name, params in cases.items():
    for mod, label in ((th, "HEAD"), (tw, "WT")):
        moved = mod._moved({**params}, "#/properties/arguments")
        print(f"{label} {name}: {json.dumps(moved)[:300]}")
    tools = [{"type": "function", "function": {"name": "f", "parameters": params}}]
    body = {"messages": M, "tools": tools, "tool_choice": {"type":"function","function":{"name":"f"}}, "max_tokens": 80, "temperature": 0}
    r = httpx.post(U + "/v1/chat/completions", json=body, timeout=120)
    if r.status_code == 200:
        c = r.json()["choices"][0]
        print("  server(WT):", r.status_code, c["finish_reason"], [t["function"]["arguments"] for t in c["message"].get("tool_calls") or []])
    else:
        print("  server(WT):", r.status_code, r.json()["error"]["message"][:200])
