from common import *
msgs = [{"role": "user", "content": "What's the weather in Paris?"}]
def fn(name="f", params=..., **kw):
    f = {"name": name, **kw}
    if params is not ...: f["function"] = None; f.pop("function"); f["parameters"] = params
    return {"type": "function", "function": f}
cases = {
 "bad schema type": [fn(params={"type": "object", "properties": {"x": {"type": "strng"}}})],
 "params not object root": [fn(params={"type": "string"})],
 "params array": [fn(params=[1])],
 "missing parameters": [fn()],
 "missing parameters required": "REQ",
 "empty params {}": [fn(params={})],
 "duplicate names": [WEATHER, WEATHER],
 "bad name chars": [fn(name="get weather!", params={"type": "object", "properties": {}})],
 "name too long": [fn(name="a" * 65, params={"type": "object", "properties": {}})],
 "empty name": [fn(name="", params={"type": "object", "properties": {}})],
 "type not function": [{"type": "custom", "custom": {"name": "x"}}],
 "missing function": [{"type": "function"}],
 "strict not closed": [fn(params={"type": "object", "properties": {"a": {"type": "string"}}}, strict=True)],
 "strict closed": [fn(params={"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False}, strict=True)],
 "unknown key in function": [fn(params={"type": "object", "properties": {}}, foo=1)],
 "required lists unknown prop": [fn(params={"type": "object", "properties": {"a": {"type": "string"}}, "required": ["b"]})],
 "unsat schema": [fn(params={"type": "object", "properties": {"a": {"type": "integer", "minimum": 5, "maximum": 1}}, "required": ["a"]})],
 "empty tools list": [],
 "ref to missing def": [fn(params={"type": "object", "properties": {"a": {"$ref": "#/$defs/Nope"}}, "required": ["a"]})],
 "description non-str": [fn(params={"type": "object", "properties": {}}, description=5)],
}
for k, tools in cases.items():
    body = {"model": M, "messages": msgs, "tools": tools, "max_tokens": 40, "temperature": 0}
    if tools == "REQ":
        body["tools"] = [fn()]; body["tool_choice"] = "required"; body["parallel_tool_calls"] = False
    r = post("/v1/chat/completions", body)
    j = r.json()
    if r.status_code != 200:
        show(k, (r.status_code, j["error"].get("message", "")[:220], j["error"].get("param")))
    else:
        c = j["choices"][0]; show(k, (200, c["finish_reason"], c["message"].get("content"), c["message"].get("tool_calls")))
# tool_choice errors
for k, tc in {"named unknown fn": {"type": "function", "function": {"name": "nope"}}, "tc bad string": "sometimes",
              "required no tools": "required", "named no tools": {"type": "function", "function": {"name": "get_weather"}},
              "allowed_tools": {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": [{"type": "function", "function": {"name": "get_weather"}}]}},
              "custom": {"type": "custom", "custom": {"name": "get_weather"}}}.items():
    body = {"model": M, "messages": msgs, "tool_choice": tc, "max_tokens": 5}
    if "no tools" not in k: body["tools"] = [WEATHER]
    r = post("/v1/chat/completions", body); j = r.json()
    show("tc " + k, (r.status_code, j.get("error", {}).get("message", "")[:200] if r.status_code != 200 else j["choices"][0]["message"]))
# parallel_tool_calls without tools
r = post("/v1/chat/completions", {"model": M, "messages": msgs, "parallel_tool_calls": False, "max_tokens": 3}); show("ptc without tools", r.status_code)
