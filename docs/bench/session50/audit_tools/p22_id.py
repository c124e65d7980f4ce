from h import *
p = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": "https://example.com/weather.json", "type": "object",
     "properties": {"unit": {"$ref": "#/$defs/Unit"}}, "required": ["unit"], "additionalProperties": False,
     "$defs": {"Unit": {"enum": ["c", "f"]}}}
s0, j0 = post({"messages": MSG, "max_tokens": 20, "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": p}}})
print("response_format:", s0, j0["choices"][0]["message"]["content"] if s0 == 200 else j0["error"]["message"][:200])
s, j = post({"messages": MSG, "max_tokens": 30, "tools": [{"type": "function", "function": {"name": "w", "parameters": p}}], "tool_choice": "required", "parallel_tool_calls": False})
print("tools:", s, j["choices"][0]["message"] if s == 200 else (j["error"]["param"], j["error"]["message"][:200]))
