from h import *
import jsonschema
def tool(name, params): return {"type": "function", "function": {"name": name, "parameters": params}}
U = [{"role": "user", "content": "Make a tree of two nodes."}]
cases = {
 "ref #/properties": {"type": "object", "properties": {"a": {"type": "string", "maxLength": 5}, "b": {"$ref": "#/properties/a"}}, "required": ["a", "b"], "additionalProperties": False},
 "ref # recursive": {"type": "object", "properties": {"v": {"type": "integer"}, "child": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}}, "required": ["v", "child"], "additionalProperties": False},
 "nested $defs": {"type": "object", "properties": {"a": {"$defs": {"X": {"type": "integer"}}, "$ref": "#/properties/a/$defs/X"}}, "required": ["a"], "additionalProperties": False},
}
for k, p in cases.items():
    # sanity: same schema as response_format
    s0, j0 = post({"messages": U, "max_tokens": 40, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": p}}})
    print(f"[{k}] response_format: {s0}", (j0["choices"][0]["message"]["content"] if s0 == 200 else j0["error"]["message"][:200]))
    s, j = post({"messages": U, "max_tokens": 60, "tools": [tool("mk", p)], "tool_choice": "required", "parallel_tool_calls": False})
    if s != 200: print(f"[{k}] tools: {s} param={j['error']['param']} {j['error']['message'][:300]}"); continue
    c = j["choices"][0]; tc = c["message"].get("tool_calls") or []
    args = tc[0]["function"]["arguments"] if tc else None
    v = "no call"
    if args:
        try: jsonschema.validate(json.loads(args), p); v = "VALID"
        except Exception as e: v = f"INVALID ({type(e).__name__}: {str(e).splitlines()[0][:120]})"
    print(f"[{k}] tools: {c['finish_reason']} args={args!r} -> {v}")
